package hook

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Gate is a hook that may hold an upgrade until it has done something first:
// the backup hook backs a Database up before its version changes. Before each
// upgrade of a release, rudder asks every hook of the kind that is a Gate, in
// the order watches.yaml lists them; the first closed one holds the upgrade.
// Installs, rollbacks and uninstalls are not gated.
type Gate interface {
	Hook
	// BeforeUpgrade says whether obj's release may be upgraded from deployed,
	// the objects of its deployed revision, to values. A gate that must act
	// first does so (starts a Job, say) and returns a closed GateResult;
	// rudder asks again on the next reconcile, which RequeueAfter brings. An
	// error holds the upgrade as well, and is retried with backoff.
	BeforeUpgrade(ctx context.Context, obj *unstructured.Unstructured, deployed []*unstructured.Unstructured, values map[string]any) (GateResult, error)
}

// GateResult is a gate's answer.
type GateResult struct {
	// Open lets the upgrade go ahead.
	Open bool
	// Reason and Message say why the gate is closed; they become the
	// Released condition's.
	Reason, Message string
	// Failed says the gate will not open by itself (a backup failed): Released
	// is then False, not Unknown.
	Failed bool
	// RequeueAfter asks for the next look; 0 for none.
	RequeueAfter time.Duration
}
