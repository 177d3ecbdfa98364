package reconcile

import (
	"fmt"
	"strconv"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/rudder-operator/rudder/internal/reconcile/status"
	"github.com/rudder-operator/rudder/internal/stored"
)

// rollbackRequest reads AnnotationRollbackTo: 0 when absent.
func rollbackRequest(obj *unstructured.Unstructured) (int, error) {
	v, ok := obj.GetAnnotations()[status.AnnotationRollbackTo]
	if !ok {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("annotation %s: %q is not a revision number; set it to one of the revisions in status.history, or remove it", status.AnnotationRollbackTo, v)
	}
	return n, nil
}

// rolledBackAt returns the generation at which the newest stored revision
// made for a rollback to `to` was asked for; -1 when there is none.
func rolledBackAt(history []stored.Revision, to int) int64 {
	if to == 0 {
		return -1
	}
	for _, rev := range history {
		if !rev.Signed || rev.Labels[stored.LabelRollbackTo] != strconv.Itoa(to) {
			continue
		}
		if g, err := strconv.ParseInt(rev.Labels[stored.LabelRollbackGeneration], 10, 64); err == nil {
			return g
		}
	}
	return -1
}
