package status

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/rudder-operator/rudder/internal/reconcile/plan"
	"github.com/rudder-operator/rudder/internal/storage"
	"github.com/rudder-operator/rudder/internal/watches"
)

// OutOfBandCondition describes the newest revision another Helm client
// deployed, nil when history holds none.
func OutOfBandCondition(o *Observation) *metav1.Condition {
	var rev *storage.Revision
	for i := range o.History {
		h := &o.History[i]
		if (h.Status == "deployed" || h.Status == "superseded") && !plan.WrittenByRudder(h) {
			rev = h
			break
		}
	}
	if rev == nil {
		return nil
	}
	c := &metav1.Condition{Type: ConditionOutOfBand, Status: metav1.ConditionTrue}
	d := o.Facts.Deployed
	switch {
	case d == nil || d.UID != rev.UID:
		c.Status, c.Reason = metav1.ConditionFalse, ReasonOutOfBandReplaced
		c.Message = fmt.Sprintf("Revision %d was written by another Helm client", rev.Number)
		if d != nil {
			c.Message += fmt.Sprintf("; revision %d serves now", d.Number)
		}
	case plan.KeepsOutOfBand(o.Facts):
		c.Reason = ReasonOutOfBandKept
		c.Message = outOfBandMessage(o) + "; kept serving, as outOfBand: keep asks, until the spec or the chart changes. " +
			"Edit the spec to have rudder deploy it again"
	default:
		c.Reason = ReasonOutOfBandReverting
		c.Message = outOfBandMessage(o) + "; rudder upgrades the release back to the spec"
		if o.Facts.OutOfBand == watches.OutOfBandKeep {
			c.Message = outOfBandMessage(o) + "; the spec or the chart changed since, so rudder upgrades the release to it"
		}
	}
	return c
}

// outOfBandMessage says which revision another Helm client deployed, and how.
func outOfBandMessage(o *Observation) string {
	msg := fmt.Sprintf("Revision %d was written by another Helm client, not rudder", o.Facts.Deployed.Number)
	if o.Deployed != nil && o.Deployed.Description != "" {
		msg += fmt.Sprintf(" (%q)", o.Deployed.Description)
	}
	return msg
}
