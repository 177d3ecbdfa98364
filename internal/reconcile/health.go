package reconcile

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"
)

// objectState is one object of a release: as the revision wants it, and what
// its live counterpart reports (nil when missing, or err when it cannot be read).
type objectState struct {
	want    *unstructured.Unstructured
	live    *objectStatus
	err     error
	differs bool // live differs from want in a field want sets
}

// objectStatus is what readiness needs of a live object: its kstatus and, for
// a workload, its replicas.
type objectStatus struct {
	status  kstatus.Status
	message string // kstatus's message, or why it could not compute one
	unknown bool   // kstatus could not compute a status

	workload                              bool
	wantReplicas, replicas, readyReplicas int32
}

// statusOf computes live's status with kstatus, which knows the workload kinds
// and the standard conditions of every other kind.
func statusOf(live *unstructured.Unstructured) objectStatus {
	var s objectStatus
	if res, err := kstatus.Compute(live); err != nil {
		s.unknown, s.message = true, err.Error()
	} else {
		s.status, s.message = res.Status, res.Message
	}
	num := func(fields ...string) int32 {
		n, _, _ := unstructured.NestedInt64(live.Object, fields...)
		return int32(n)
	}
	switch live.GetKind() {
	case "Deployment", "StatefulSet", "ReplicaSet":
		want, found, _ := unstructured.NestedInt64(live.Object, "spec", "replicas")
		if !found {
			want = 1
		}
		s.workload, s.wantReplicas = true, int32(want)
		s.replicas, s.readyReplicas = num("status", "replicas"), num("status", "readyReplicas")
	case "DaemonSet":
		s.workload, s.wantReplicas = true, num("status", "desiredNumberScheduled")
		s.replicas, s.readyReplicas = num("status", "currentNumberScheduled"), num("status", "numberReady")
	}
	return s
}

// health is the readiness of a release's objects.
type health struct {
	ready   bool
	failed  bool   // an object reports that it failed (kstatus Failed)
	message string // why not ready, naming the first object holding it back

	objects       int
	workloads     int   // Deployments, StatefulSets, ReplicaSets, DaemonSets
	wantReplicas  int32 // replicas the workloads ask for
	replicas      int32 // replicas the workloads have
	readyReplicas int32 // replicas ready
}

// healthOf sums up the states of a release's objects.
func healthOf(states []objectState) health {
	h := health{ready: true, objects: len(states)}
	for _, s := range states {
		ref := s.want.GetKind() + "/" + s.want.GetName()
		if l := s.live; l != nil && l.workload {
			h.workloads++
			h.wantReplicas += l.wantReplicas
			h.replicas += l.replicas
			h.readyReplicas += l.readyReplicas
		}
		if !h.ready {
			continue // the message names the first object only
		}
		switch {
		case s.err != nil:
			h.ready, h.message = false, fmt.Sprintf("%s cannot be read: %v", ref, s.err)
		case s.live == nil:
			h.ready, h.message = false, ref+" does not exist yet"
		case s.differs:
			h.ready, h.message = false, ref+" does not match the deployed revision yet"
		case s.live.unknown:
			h.ready, h.message = false, fmt.Sprintf("%s: %s", ref, s.live.message)
		case s.live.status == kstatus.FailedStatus:
			h.ready, h.failed, h.message = false, true, fmt.Sprintf("%s failed: %s", ref, s.live.message)
		case s.live.status != kstatus.CurrentStatus:
			h.ready, h.message = false, fmt.Sprintf("%s is not ready: %s", ref, s.live.message)
		}
	}
	return h
}

// summary says how ready the release is, in the seed's words.
func (h health) summary() string {
	switch {
	case h.ready && h.workloads > 0:
		return "All replicas are ready"
	case h.ready:
		return fmt.Sprintf("All %d objects are ready", h.objects)
	case h.workloads > 0 && !h.failed:
		// Mid-rollout, old and new pods together can outnumber the wanted ones.
		return fmt.Sprintf("%d/%d replicas ready", min(h.readyReplicas, h.wantReplicas), h.wantReplicas)
	default:
		return h.message
	}
}
