package status

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"
)

// ObjectState is one object of a release: as the revision wants it, and what
// its live counterpart reports (nil when missing, or err when it cannot be read).
type ObjectState struct {
	Want    *unstructured.Unstructured
	Live    *ObjectStatus
	Err     error
	Differs bool // live differs from want in a field want sets
}

// ObjectStatus is what readiness needs of a live object: its kstatus and, for
// a workload, its replicas.
type ObjectStatus struct {
	Status  kstatus.Status
	Message string // kstatus's message, or why it could not compute one
	Unknown bool   // kstatus could not compute a status

	Workload                              bool
	WantReplicas, Replicas, ReadyReplicas int32
}

// OfObject computes live's status with kstatus, which knows the workload kinds
// and the standard conditions of every other kind.
func OfObject(live *unstructured.Unstructured) ObjectStatus {
	var s ObjectStatus
	if res, err := kstatus.Compute(live); err != nil {
		s.Unknown, s.Message = true, err.Error()
	} else {
		s.Status, s.Message = res.Status, res.Message
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
		s.Workload, s.WantReplicas = true, int32(want)
		s.Replicas, s.ReadyReplicas = num("status", "replicas"), num("status", "readyReplicas")
	case "DaemonSet":
		s.Workload, s.WantReplicas = true, num("status", "desiredNumberScheduled")
		s.Replicas, s.ReadyReplicas = num("status", "currentNumberScheduled"), num("status", "numberReady")
	}
	return s
}

// Health is the readiness of a release's objects.
type Health struct {
	Ready   bool
	Failed  bool   // an object reports that it failed (kstatus Failed)
	Message string // why not ready, naming the first object holding it back

	Objects       int
	Workloads     int   // Deployments, StatefulSets, ReplicaSets, DaemonSets
	WantReplicas  int32 // replicas the workloads ask for
	Replicas      int32 // replicas the workloads have
	ReadyReplicas int32 // replicas ready
}

// HealthOf sums up the states of a release's objects.
func HealthOf(states []ObjectState) Health {
	h := Health{Ready: true, Objects: len(states)}
	for _, s := range states {
		ref := s.Want.GetKind() + "/" + s.Want.GetName()
		if l := s.Live; l != nil && l.Workload {
			h.Workloads++
			h.WantReplicas += l.WantReplicas
			h.Replicas += l.Replicas
			h.ReadyReplicas += l.ReadyReplicas
		}
		if !h.Ready {
			continue // the message names the first object only
		}
		switch {
		case s.Err != nil:
			h.Ready, h.Message = false, fmt.Sprintf("%s cannot be read: %v", ref, s.Err)
		case s.Live == nil:
			h.Ready, h.Message = false, ref+" does not exist yet"
		case s.Differs:
			h.Ready, h.Message = false, ref+" does not match the deployed revision yet"
		case s.Live.Unknown:
			h.Ready, h.Message = false, fmt.Sprintf("%s: %s", ref, s.Live.Message)
		case s.Live.Status == kstatus.FailedStatus:
			h.Ready, h.Failed, h.Message = false, true, fmt.Sprintf("%s failed: %s", ref, s.Live.Message)
		case s.Live.Status != kstatus.CurrentStatus:
			h.Ready, h.Message = false, fmt.Sprintf("%s is not ready: %s", ref, s.Live.Message)
		}
	}
	return h
}

// summary says how ready the release is, in the seed's words.
func (h Health) summary() string {
	switch {
	case h.Ready && h.Workloads > 0:
		return "All replicas are ready"
	case h.Ready:
		return fmt.Sprintf("All %d objects are ready", h.Objects)
	case h.Workloads > 0 && !h.Failed:
		// Mid-rollout, old and new pods together can outnumber the wanted ones.
		return fmt.Sprintf("%d/%d replicas ready", min(h.ReadyReplicas, h.WantReplicas), h.WantReplicas)
	default:
		return h.Message
	}
}
