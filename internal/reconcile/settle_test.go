package reconcile

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
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
	widget := func(size int64, phase string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "example.com/v1", "kind": "Widget",
			"metadata": map[string]any{"name": "w", "namespace": "ns", "resourceVersion": phase},
			"spec":     map[string]any{"size": size},
			"status":   map[string]any{"phase": phase},
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
		{"a status change that leaves readiness as it was", deployment, rolledOut(2, 2, 2),
			edited(rolledOut(2, 2, 2), func(d *appsv1.Deployment) { d.Status.CollisionCount = new(int32(1)) }), true},
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
		{"a custom resource's status", widgetKind, widget(1, "Pending"), widget(1, "Working"), true},
		{"a custom resource's spec", widgetKind, widget(1, "Working"), widget(2, "Working"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := settles(tt.kind, tt.old, tt.new); got != tt.want {
				t.Errorf("settles = %v, want %v", got, tt.want)
			}
		})
	}
}
