package reconcile

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"
)

// objectState is one object of a release: as the revision wants it, and as it
// lives in the cluster (nil when missing, or err when it cannot be read).
type objectState struct {
	want, live *unstructured.Unstructured
	err        error
	differs    bool // live differs from want in a field want sets
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

// healthOf computes readiness with kstatus, which knows the workload kinds and
// the standard conditions of every other kind.
func healthOf(states []objectState) health {
	h := health{ready: true, objects: len(states)}
	for _, s := range states {
		ref := s.want.GetKind() + "/" + s.want.GetName()
		if s.live != nil {
			h.addReplicas(s.live)
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
		default:
			res, err := kstatus.Compute(s.live)
			switch {
			case err != nil:
				h.ready, h.message = false, fmt.Sprintf("%s: %v", ref, err)
			case res.Status == kstatus.FailedStatus:
				h.ready, h.failed, h.message = false, true, fmt.Sprintf("%s failed: %s", ref, res.Message)
			case res.Status != kstatus.CurrentStatus:
				h.ready, h.message = false, fmt.Sprintf("%s is not ready: %s", ref, res.Message)
			}
		}
	}
	return h
}

func (h *health) addReplicas(live *unstructured.Unstructured) {
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
		h.workloads++
		h.wantReplicas += int32(want)
		h.replicas += num("status", "replicas")
		h.readyReplicas += num("status", "readyReplicas")
	case "DaemonSet":
		h.workloads++
		h.wantReplicas += num("status", "desiredNumberScheduled")
		h.replicas += num("status", "currentNumberScheduled")
		h.readyReplicas += num("status", "numberReady")
	}
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
