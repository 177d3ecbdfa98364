package assess

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"
)

var deploymentGVK = schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}

func liveDeployment(generation int64, version string, labels map[string]string) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", UID: "u1", Generation: generation, ResourceVersion: version, Labels: labels},
		Spec: appsv1.DeploymentSpec{Replicas: new(int32(2)), Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "web", Image: "nginx:1.25"}},
		}}},
		Status: appsv1.DeploymentStatus{ObservedGeneration: generation, Replicas: 2, UpdatedReplicas: 2, ReadyReplicas: 1, AvailableReplicas: 1},
	}
}

func wantDeployment(meta map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta,
	}}
}

func TestPointOf(t *testing.T) {
	gk := deploymentGVK.GroupKind()
	want := wantDeployment(map[string]any{"name": "web", "namespace": "ns", "labels": map[string]any{"app": "web"}})
	base := liveDeployment(3, "10", map[string]string{"app": "web"})
	at := pointOf(want, base, gk)
	if at.generation != 3 || at.version != "" {
		t.Fatalf("pointOf a Deployment = %+v, want its generation", at)
	}
	tests := []struct {
		name     string
		want     *unstructured.Unstructured
		live     func(d *appsv1.Deployment)
		gk       schema.GroupKind
		wantSame bool
	}{
		{name: "a status change at the same generation is the same point", want: want, gk: gk, wantSame: true,
			live: func(d *appsv1.Deployment) { d.ResourceVersion, d.Status.ReadyReplicas = "11", 2 }},
		{name: "a spec change is another point", want: want, gk: gk, live: func(d *appsv1.Deployment) { d.Generation = 4 }},
		{name: "a label changed by hand is another point", want: want, gk: gk, live: func(d *appsv1.Deployment) { d.Labels["app"] = "evil" }},
		{name: "a label of the revision removed is another point", want: want, gk: gk, live: func(d *appsv1.Deployment) { delete(d.Labels, "app") }},
		{name: "an annotation of the revision changed is another point", gk: gk,
			want: wantDeployment(map[string]any{"name": "web", "annotations": map[string]any{"a": "b"}}),
			live: func(d *appsv1.Deployment) { d.Annotations = map[string]string{"a": "c"} }},
		{name: "a label the revision does not set is the same point", want: want, gk: gk, wantSame: true,
			live: func(d *appsv1.Deployment) { d.Labels["extra"] = "x" }},
		{name: "an annotation another manager sets is the same point", want: want, gk: gk, wantSame: true,
			live: func(d *appsv1.Deployment) {
				d.Annotations = map[string]string{"deployment.kubernetes.io/revision": "2"}
			}},
		{name: "an owner reference is another point", want: want, gk: gk, live: func(d *appsv1.Deployment) {
			d.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "WebApp", Name: "web", UID: "o1"}}
		}},
		{name: "a finalizer is another point", want: want, gk: gk, live: func(d *appsv1.Deployment) { d.Finalizers = []string{"f"} }},
		{name: "other metadata set by the revision: at the resourceVersion", gk: gk,
			want: wantDeployment(map[string]any{"name": "web", "generateName": "w"}),
			live: func(d *appsv1.Deployment) { d.ResourceVersion = "11" }},
		{name: "a kind whose generation does not follow its spec is at its resourceVersion", want: want,
			gk: schema.GroupKind{Kind: "Service"}, live: func(d *appsv1.Deployment) { d.ResourceVersion = "11" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			live := base.DeepCopy()
			tt.live(live)
			if got := pointOf(tt.want, live, tt.gk); (got == at) != tt.wantSame {
				t.Errorf("pointOf = %+v, first point %+v: same %v, want %v", got, at, got == at, tt.wantSame)
			}
		})
	}
}

func TestSeenObject_StatusIsComputedAgainOnlyWhenTheObjectChanged(t *testing.T) {
	var seen Seen
	live := liveDeployment(1, "10", nil)
	got, err := seen.statusFor(live, deploymentGVK)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != kstatus.InProgressStatus || got.ReadyReplicas != 1 || got.WantReplicas != 2 || !got.Workload {
		t.Fatalf("status %+v, want InProgress with 1 of 2 replicas ready", got)
	}
	if len(live.Spec.Template.Spec.Containers) != 1 {
		t.Fatal("statusFor changed the cached object's pod template")
	}

	seen.status.Message = "remembered"
	if got, _ := seen.statusFor(live, deploymentGVK); got.Message != "remembered" {
		t.Errorf("unchanged object assessed again: %+v", got)
	}
	ready := liveDeployment(1, "11", nil)
	ready.Status.ReadyReplicas, ready.Status.AvailableReplicas = 2, 2
	ready.Status.Conditions = []appsv1.DeploymentCondition{{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue}}
	if got, _ := seen.statusFor(ready, deploymentGVK); got.Status != kstatus.CurrentStatus || got.ReadyReplicas != 2 {
		t.Errorf("status after the change %+v, want Current with 2 ready", got)
	}
}

func TestSeenObject_DriftAtOnlyForTheObjectAndPointCompared(t *testing.T) {
	var seen Seen
	live := liveDeployment(3, "10", nil)
	at := syncPoint{generation: 3}
	if _, ok := seen.driftAt(live, at); ok {
		t.Fatal("a comparison known before any")
	}
	seen.recordDrift(live, at, nil)
	if fields, ok := seen.driftAt(liveDeployment(3, "11", nil), at); !ok || fields != nil {
		t.Errorf("a status change at the same point: %v, %v; want no drift, known", fields, ok)
	}
	if _, ok := seen.driftAt(live, syncPoint{generation: 4}); ok {
		t.Error("known at a generation not compared")
	}
	again := liveDeployment(3, "12", nil)
	again.UID = "u2"
	if _, ok := seen.driftAt(again, at); ok {
		t.Error("a new object with the same name is known by the old one's comparison")
	}
	seen.recordDrift(live, at, []string{"spec.replicas"})
	if fields, ok := seen.driftAt(live, at); !ok || len(fields) != 1 || fields[0] != "spec.replicas" {
		t.Errorf("after a comparison that found spec.replicas: %v, %v", fields, ok)
	}
}

// An object rudder just applied counts as compared with nothing differing
// while it stays at the point its apply answered, and no longer once its
// spec or one of the revision's labels changes.
func TestAppliedAs_HoldsUntilTheObjectChanges(t *testing.T) {
	want := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web", "labels": map[string]any{"app": "web"}},
	}}
	live := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", UID: "u1", Generation: 2, ResourceVersion: "10", Labels: map[string]string{"app": "web"}}}
	seen := AppliedAs(want, live)
	at := pointOf(want, live, schema.GroupKind{Group: "apps", Kind: "Deployment"})
	if fields, ok := seen.driftAt(live, at); !ok || fields != nil {
		t.Fatalf("right after the apply: %v %v, want compared with no drift", fields, ok)
	}
	status := live.DeepCopy()
	status.ResourceVersion = "11" // the Deployment controller wrote its status
	if _, ok := seen.driftAt(status, pointOf(want, status, schema.GroupKind{Group: "apps", Kind: "Deployment"})); !ok {
		t.Error("a status write made the apply's comparison stale")
	}
	for name, change := range map[string]func(*appsv1.Deployment){
		"spec":  func(d *appsv1.Deployment) { d.Generation = 3 },
		"label": func(d *appsv1.Deployment) { d.Labels["app"] = "other" },
		"uid":   func(d *appsv1.Deployment) { d.UID = "u2" },
	} {
		d := live.DeepCopy()
		change(d)
		if _, ok := seen.driftAt(d, pointOf(want, d, schema.GroupKind{Group: "apps", Kind: "Deployment"})); ok {
			t.Errorf("after a change of its %s, the apply's comparison still holds", name)
		}
	}
}
