package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rudder-operator/rudder/internal/reconcile"
)

// test asks rudder to run the chart tests of obj's deployed revision
// (annotation reconcile.AnnotationTestRequestedAt) and, with wait, waits
// until status.lastHandledTestAt answers the request, then prints the Tested
// condition. A run that failed, or could not run, is an error.
func (c *conn) test(ctx context.Context, out io.Writer, obj *unstructured.Unstructured, wait time.Duration) error {
	token := time.Now().UTC().Format(time.RFC3339Nano)
	patch := fmt.Appendf(nil, `{"metadata":{"annotations":{%q:%q}}}`, reconcile.AnnotationTestRequestedAt, token)
	if err := c.client.Patch(ctx, obj, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return fmt.Errorf("asking for a test run: %w", err)
	}
	p := &printer{w: out}
	ref := strings.ToLower(obj.GetKind()) + "/" + obj.GetName()
	p.printf("%s: test run requested (annotation %s=%s)\n", ref, reconcile.AnnotationTestRequestedAt, token)
	if wait == 0 {
		return p.err
	}
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	for {
		if err := c.client.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return err
		}
		if handled, _, _ := unstructured.NestedString(obj.Object, "status", "lastHandledTestAt"); handled == token {
			status, reason, message := tested(obj)
			p.printf("%s: %s: %s\n", ref, reason, message)
			if p.err != nil {
				return p.err
			}
			if status != "True" {
				return fmt.Errorf("%s: the tests did not pass (%s); see kubectl describe %s", ref, reason, ref)
			}
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the tests did not end within %s: is rudder running, and is the release deployed? see kubectl describe %s", wait, ref)
		case <-time.After(500 * time.Millisecond):
		}
	}
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
