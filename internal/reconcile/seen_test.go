package reconcile

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
	owned := wantDeployment(map[string]any{"name": "web", "finalizers": []any{"f"}, "ownerReferences": []any{map[string]any{
		"apiVersion": "webapp.my.domain/v1", "kind": "WebApp", "name": "web", "uid": "o1", "controller": true, "blockOwnerDeletion": true,
	}}})
	ownedLive := func(controller bool) *appsv1.Deployment {
		d := liveDeployment(3, "10", nil)
		d.Finalizers = []string{"f"}
		d.OwnerReferences = []metav1.OwnerReference{{APIVersion: "webapp.my.domain/v1", Kind: "WebApp", Name: "web", UID: "o1",
			Controller: new(controller), BlockOwnerDeletion: new(true)}}
		return d
	}
	tests := []struct {
		name      string
		want      *unstructured.Unstructured
		live      *appsv1.Deployment
		gk        schema.GroupKind
		ignores   bool
		wantPoint syncPoint
		wantHolds bool
	}{
		{name: "a Deployment is at its generation", want: want, live: liveDeployment(3, "10", map[string]string{"app": "web", "extra": "x"}), gk: gk,
			wantPoint: syncPoint{generation: 3}, wantHolds: true},
		{name: "a label changed by hand does not hold", want: want, live: liveDeployment(3, "11", map[string]string{"app": "evil"}), gk: gk},
		{name: "owner references and finalizers are compared", gk: gk, want: owned, live: ownedLive(true), wantPoint: syncPoint{generation: 3}, wantHolds: true},
		{name: "an owner reference changed by hand does not hold", gk: gk, want: owned, live: ownedLive(false)},
		{name: "other metadata is not judged", gk: gk,
			want: wantDeployment(map[string]any{"name": "web", "generateName": "w"}), live: liveDeployment(3, "10", nil)},
		{name: "a kind whose generation does not follow its spec is at its resourceVersion", want: want, live: liveDeployment(3, "10", nil),
			gk: schema.GroupKind{Kind: "Service"}, wantPoint: syncPoint{version: "10"}, wantHolds: true},
		{name: "ignore rules may name metadata: the resourceVersion", want: want, live: liveDeployment(3, "10", nil), gk: gk, ignores: true,
			wantPoint: syncPoint{version: "10"}, wantHolds: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			at, holds := pointOf(tt.want, tt.live, tt.gk, tt.ignores)
			if at != tt.wantPoint || holds != tt.wantHolds {
				t.Errorf("pointOf = %+v, %v; want %+v, %v", at, holds, tt.wantPoint, tt.wantHolds)
			}
		})
	}
}

func TestSeenObject_StatusIsComputedAgainOnlyWhenTheObjectChanged(t *testing.T) {
	var seen seenObject
	live := liveDeployment(1, "10", nil)
	got, err := seen.statusFor(live, deploymentGVK)
	if err != nil {
		t.Fatal(err)
	}
	if got.status != kstatus.InProgressStatus || got.readyReplicas != 1 || got.wantReplicas != 2 || !got.workload {
		t.Fatalf("status %+v, want InProgress with 1 of 2 replicas ready", got)
	}
	if len(live.Spec.Template.Spec.Containers) != 1 {
		t.Fatal("statusFor changed the cached object's pod template")
	}

	seen.status.message = "remembered"
	if got, _ := seen.statusFor(live, deploymentGVK); got.message != "remembered" {
		t.Errorf("unchanged object assessed again: %+v", got)
	}
	ready := liveDeployment(1, "11", nil)
	ready.Status.ReadyReplicas, ready.Status.AvailableReplicas = 2, 2
	ready.Status.Conditions = []appsv1.DeploymentCondition{{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue}}
	if got, _ := seen.statusFor(ready, deploymentGVK); got.status != kstatus.CurrentStatus || got.readyReplicas != 2 {
		t.Errorf("status after the change %+v, want Current with 2 ready", got)
	}
}

func TestSeenObject_InSyncOnlyForTheObjectAndPointCompared(t *testing.T) {
	var seen seenObject
	live := liveDeployment(3, "10", nil)
	at := syncPoint{generation: 3}
	if seen.inSync(live, at) {
		t.Fatal("in sync before any comparison")
	}
	seen.recordSync(live, at, true)
	if !seen.inSync(liveDeployment(3, "11", nil), at) {
		t.Error("a status change at the same generation is no longer in sync")
	}
	if seen.inSync(live, syncPoint{generation: 4}) {
		t.Error("in sync at a generation not compared")
	}
	again := liveDeployment(3, "12", nil)
	again.UID = "u2"
	if seen.inSync(again, at) {
		t.Error("a new object with the same name is in sync with the old one's comparison")
	}
	seen.recordSync(live, at, false)
	if seen.inSync(live, at) {
		t.Error("in sync after a comparison found a difference")
	}
}
