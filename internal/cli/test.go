package cli

import (
	"context"
	"fmt"
	"io"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/rudder-operator/rudder/internal/reconcile"
)

// test asks rudder to run the chart tests of obj's deployed revision
// (annotation reconcile.AnnotationTestRequestedAt) and, with wait, waits
// until status.lastHandledTestAt answers the request, then prints the Tested
// condition. A run that failed, or could not run, is an error.
func (c *conn) test(ctx context.Context, out io.Writer, obj *unstructured.Unstructured, wait time.Duration) error {
	return c.ask(ctx, out, obj, request{annotation: reconcile.AnnotationTestRequestedAt, handled: "lastHandledTestAt",
		what: "test run", late: "the tests did not end (is the release deployed?)"},
		wait, func(p *printer, ref string) error {
			status, reason, message := tested(obj)
			p.printf("%s: %s: %s\n", ref, reason, message)
			if p.err != nil {
				return p.err
			}
			if status != "True" {
				return fmt.Errorf("%s: the tests did not pass (%s); see kubectl describe %s", ref, reason, ref)
			}
			return nil
		})
}

// tested returns obj's Tested condition's status, reason and message.
func tested(obj *unstructured.Unstructured) (status, reason, message string) {
	conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, raw := range conds {
		if m, ok := raw.(map[string]any); ok && m["type"] == reconcile.ConditionTested {
			return fmt.Sprint(m["status"]), fmt.Sprint(m["reason"]), fmt.Sprint(m["message"])
		}
	}
	return "Unknown", "NoCondition", "the resource has no Tested condition"
}
