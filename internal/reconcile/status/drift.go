package status

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DriftCondition is the Drifted condition of o: nil when drift was not
// looked at in warn mode this reconcile (the condition then stays as it is).
func DriftCondition(o *Observation) *metav1.Condition {
	if o.Drift == nil {
		return nil
	}
	if len(*o.Drift) == 0 {
		return &metav1.Condition{Type: ConditionDrifted, Status: metav1.ConditionFalse, Reason: ReasonNoDrift,
			Message: fmt.Sprintf("Every object matches revision %d", o.Deployed.Revision)}
	}
	if !o.Deployed.Signed {
		return &metav1.Condition{Type: ConditionDrifted, Status: metav1.ConditionTrue, Reason: ReasonRevisionNotSigned, Message: driftMessage(o)}
	}
	return &metav1.Condition{Type: ConditionDrifted, Status: metav1.ConditionTrue, Reason: ReasonDrifted, Message: driftMessage(o)}
}

func driftMessage(o *Observation) string {
	if !o.Deployed.Signed {
		return fmt.Sprintf("%s differ from revision %d outside Helm; rudder did not write that revision, so it does not apply its manifest: "+
			"change the spec to have rudder upgrade the release, or undo the edit", strings.Join(*o.Drift, ", "), o.Deployed.Revision)
	}
	return fmt.Sprintf("%s differ from revision %d outside Helm; driftDetection.mode is warn, so rudder leaves them: "+
		"undo the edit, or upgrade the release to make it part of the chart", strings.Join(*o.Drift, ", "), o.Deployed.Revision)
}
