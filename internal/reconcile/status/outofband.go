package status

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/rudder-operator/rudder/internal/reconcile/plan"
	"github.com/rudder-operator/rudder/internal/stored"
	"github.com/rudder-operator/rudder/internal/watches"
)

// OutOfBandCondition describes the newest revision another Helm client
// deployed, and the storage Secrets of the release that rudder did not write
// and that do not decode; nil when history holds neither.
func OutOfBandCondition(o *Observation) *metav1.Condition {
	var rev *stored.Revision
	for i := range o.History {
		h := &o.History[i]
		if (h.Status == "deployed" || h.Status == "superseded") && !plan.WrittenByRudder(h) && !h.Undecodable {
			rev = h
			break
		}
	}
	if rev == nil {
		return undecodableCondition(o)
	}
	c := &metav1.Condition{Type: ConditionOutOfBand, Status: metav1.ConditionTrue}
	s := o.Facts.Serving
	switch {
	case s == nil || s.UID != rev.UID:
		c.Status, c.Reason = metav1.ConditionFalse, ReasonOutOfBandReplaced
		c.Message = fmt.Sprintf("Revision %d was written by another Helm client", rev.Number)
		if s != nil {
			c.Message += fmt.Sprintf("; revision %d serves now", s.Number)
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
	if u := undecodableCondition(o); u != nil {
		c.Message += ". " + u.Message
	}
	return c
}

// undecodableCondition names the storage Secrets of the release that rudder
// did not write and that do not decode: it neither waits for them nor rests
// anything on them. Nil when there are none.
func undecodableCondition(o *Observation) *metav1.Condition {
	var names []string
	for _, r := range o.History {
		if r.Undecodable {
			names = append(names, fmt.Sprintf("%s (revision %d)", r.Secret, r.Number))
		}
	}
	if len(names) == 0 {
		return nil
	}
	return &metav1.Condition{Type: ConditionOutOfBand, Status: metav1.ConditionTrue, Reason: ReasonRevisionUndecodable,
		Message: fmt.Sprintf("Storage Secret %s does not decode and was not written by rudder, which ignores it: it is no lock and no base of any step. "+
			"Delete it if it is not a revision", strings.Join(names, ", "))}
}

// outOfBandMessage says which revision another Helm client deployed, and how.
func outOfBandMessage(o *Observation) string {
	msg := fmt.Sprintf("Revision %d was written by another Helm client, not rudder", o.Facts.Serving.Number)
	if o.Deployed != nil && !o.Deployed.Signed && o.Deployed.Description != "" {
		msg += fmt.Sprintf(" (%q)", o.Deployed.Description)
	}
	return msg
}
