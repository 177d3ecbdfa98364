package enqueue

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// rolledOut returns a Deployment of want replicas, as a cache holds it (no
// kind), whose rollout is complete with ready of them ready.
func rolledOut(want, replicas, ready int32) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{
			Name: "web", Namespace: "ns", Generation: 2, ResourceVersion: "10",
			Labels: map[string]string{"app": "web"},
		},
		Spec: appsv1.DeploymentSpec{
			Replicas: &want,
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx:1.25"}}}},
		},
		Status: appsv1.DeploymentStatus{
			ObservedGeneration: 2, Replicas: replicas, UpdatedReplicas: replicas,
			ReadyReplicas: ready, AvailableReplicas: ready,
			Conditions: []appsv1.DeploymentCondition{{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue}},
		},
	}
}

func TestSettles(t *testing.T) {
	deployment := appsv1.SchemeGroupVersion.WithKind("Deployment")
	service := corev1.SchemeGroupVersion.WithKind("Service")
	configMap := corev1.SchemeGroupVersion.WithKind("ConfigMap")
	edited := func(d *appsv1.Deployment, edit func(*appsv1.Deployment)) *appsv1.Deployment {
		d = d.DeepCopy()
		d.ResourceVersion = "11"
		edit(d)
		return d
	}
	svc := func(port int32) *corev1.Service {
		return &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", ResourceVersion: "5"},
			Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: port, TargetPort: intstr.FromInt32(port)}}},
		}
	}
	widgetKind := schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}
	// A Widget reconciling is not ready (kstatus InProgress); one without
	// conditions is (Current).
	widget := func(size int64, phase string, reconciling bool) *unstructured.Unstructured {
		status := map[string]any{"phase": phase}
		if reconciling {
			status["conditions"] = []any{map[string]any{"type": "Reconciling", "status": "True", "reason": phase}}
		}
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "example.com/v1", "kind": "Widget",
			"metadata": map[string]any{"name": "w", "namespace": "ns", "resourceVersion": phase},
			"spec":     map[string]any{"size": size},
			"status":   status,
		}}
	}
	tests := []struct {
		name     string
		kind     schema.GroupVersionKind
		old, new client.Object
		want     bool
	}{
		{"a pod lost: fewer ready replicas", deployment, rolledOut(2, 2, 2), rolledOut(2, 2, 1), true},
		{"its replacement ready", deployment, rolledOut(2, 2, 1), rolledOut(2, 2, 2), false},
		{"one more of three ready: progress, not ready yet", deployment, rolledOut(3, 3, 1), rolledOut(3, 3, 2), true},
		{"a status change of a ready Deployment: may be news", deployment, rolledOut(2, 2, 2),
			edited(rolledOut(2, 2, 2), func(d *appsv1.Deployment) { d.Status.CollisionCount = new(int32(1)) }), false},
		{"a rollout's last update, which only sets its conditions", deployment,
			edited(rolledOut(1, 1, 1), func(d *appsv1.Deployment) { d.Status.Conditions = nil }), rolledOut(1, 1, 1), false},
		{"a rollout in progress: the surge pod still there", deployment, rolledOut(2, 2, 2), rolledOut(2, 3, 3), true},
		{"the end of a rollout: the surge pod gone, all current", deployment,
			edited(rolledOut(2, 3, 3), func(d *appsv1.Deployment) { d.Status.UpdatedReplicas = 1 }), rolledOut(2, 2, 2), false},
		{"the image edited by hand", deployment, rolledOut(2, 2, 2),
			edited(rolledOut(2, 2, 2), func(d *appsv1.Deployment) {
				d.Spec.Template.Spec.Containers[0].Image = "evil:latest"
				d.Generation++ // as the API server counts it
			}), false},
		{"a label removed by hand, with a status change", deployment, rolledOut(2, 2, 2),
			edited(rolledOut(2, 2, 1), func(d *appsv1.Deployment) { delete(d.Labels, "app") }), false},
		{"being deleted", deployment, rolledOut(2, 2, 2),
			edited(rolledOut(2, 2, 1), func(d *appsv1.Deployment) { d.DeletionTimestamp = &metav1.Time{} }), false},
		{"a Service's port edited: no generation to tell", service, svc(80), svc(81), false},
		{"a ConfigMap's data edited", configMap,
			&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}, Data: map[string]string{"k": "a"}},
			&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}, Data: map[string]string{"k": "b"}}, false},
		{"a custom resource's status, still reconciling", widgetKind, widget(1, "Pending", true), widget(1, "Working", true), true},
		{"a custom resource's status, done", widgetKind, widget(1, "Working", true), widget(1, "Done", false), false},
		{"a custom resource's spec", widgetKind, widget(1, "Working", true), widget(2, "Working", true), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := settles(tt.kind, tt.old, tt.new); got != tt.want {
				t.Errorf("settles = %v, want %v", got, tt.want)
			}
		})
	}
}

// mayBeReady must never say no where kstatus, which health asks, says
// Current: the update would wait 2 s to be reported ready. Every combination
// of counts around the wanted replicas is tried, with and without the
// controller having seen the spec and with each condition.
func TestMayBeReady_IsTrueWheneverKstatusSaysCurrent(t *testing.T) {
	counts := []int32{0, 1, 2, 3}
	seen := []int64{1, 2}
	conditions := [][]appsv1.DeploymentCondition{nil,
		{{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue}},
		{{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue},
			{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: "NewReplicaSetAvailable"}}}
	checked, current := 0, 0
	check := func(gvk schema.GroupVersionKind, obj client.Object) {
		t.Helper()
		checked++
		m, err := asMap(gvk, obj)
		if err != nil {
			t.Fatal(err)
		}
		res, err := kstatus.Compute(&unstructured.Unstructured{Object: m})
		if err != nil || res.Status != kstatus.CurrentStatus {
			return
		}
		current++
		if !mayBeReady(gvk, obj) {
			t.Errorf("%s %+v: kstatus says Current, mayBeReady says no", gvk.Kind, m["status"])
		}
	}
	want := int32(2)
	meta := metav1.ObjectMeta{Name: "w", Namespace: "ns", Generation: 2}
	for _, observed := range seen {
		for _, r := range counts {
			for _, u := range counts {
				for _, rd := range counts {
					for _, a := range counts {
						for _, c := range conditions {
							check(appsv1.SchemeGroupVersion.WithKind("Deployment"), &appsv1.Deployment{ObjectMeta: meta,
								Spec: appsv1.DeploymentSpec{Replicas: &want},
								Status: appsv1.DeploymentStatus{ObservedGeneration: observed, Replicas: r, UpdatedReplicas: u,
									ReadyReplicas: rd, AvailableReplicas: a, Conditions: c}})
						}
						for _, strategy := range []appsv1.StatefulSetUpdateStrategyType{appsv1.RollingUpdateStatefulSetStrategyType, appsv1.OnDeleteStatefulSetStrategyType} {
							check(appsv1.SchemeGroupVersion.WithKind("StatefulSet"), &appsv1.StatefulSet{ObjectMeta: meta,
								Spec: appsv1.StatefulSetSpec{Replicas: &want, UpdateStrategy: appsv1.StatefulSetUpdateStrategy{Type: strategy}},
								Status: appsv1.StatefulSetStatus{ObservedGeneration: observed, Replicas: r, UpdatedReplicas: u,
									ReadyReplicas: rd, CurrentReplicas: a, CurrentRevision: "a", UpdateRevision: "a"}})
						}
						check(appsv1.SchemeGroupVersion.WithKind("DaemonSet"), &appsv1.DaemonSet{ObjectMeta: meta,
							Status: appsv1.DaemonSetStatus{ObservedGeneration: observed, DesiredNumberScheduled: want,
								CurrentNumberScheduled: r, UpdatedNumberScheduled: u, NumberReady: rd, NumberAvailable: a}})
					}
				}
			}
		}
	}
	if current == 0 {
		t.Fatalf("none of the %d objects is Current: the test checks nothing", checked)
	}
	t.Logf("%d objects, %d of them Current", checked, current)
}
