package cli

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/rudder-operator/rudder/internal/reconcile/status"
)

func newTestCommand(e *env) *cobra.Command {
	var wait time.Duration
	cmd := &cobra.Command{
		Use:   "test <kind>/<name>",
		Short: "Run the chart's tests on a resource's deployed revision (helm test)",
		Long: `Run the chart's tests (its helm.sh/hook: test templates) on the deployed revision of a resource's
release, as helm test does: the command sets the annotation rudder.dev/test-requested-at and, with
--wait, waits for the result and prints the Tested condition. It fails when a test fails.`,
		Example: e.examples(`  # Run the tests of WebApp my-webapp and wait for the result
  rudder test webapp/my-webapp -n shop

  # Only ask; the Tested condition says how the run ended
  rudder test webapp/my-webapp --wait 0`),
		Args:              resourceArgs,
		ValidArgsFunction: e.completeResource,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkWait(wait); err != nil {
				return err
			}
			c, obj, err := e.resource(cmd.Context(), args)
			if err != nil {
				return err
			}
			return c.test(cmd.Context(), e.io.Out, obj, wait)
		},
	}
	// The default test.timeout, and a reconcile's start.
	waitFlag(cmd, &wait, 6*time.Minute, "the tests to end")
	return cmd
}

// test asks rudder to run the chart tests of obj's deployed revision
// (annotation reconcile.AnnotationTestRequestedAt) and, with wait, waits
// until status.lastHandledTestAt answers the request, then prints the Tested
// condition. A run that failed, or could not run, is an error.
func (c *conn) test(ctx context.Context, out io.Writer, obj *unstructured.Unstructured, wait time.Duration) error {
	return c.ask(ctx, out, obj, request{annotation: status.AnnotationTestRequestedAt, handled: "lastHandledTestAt",
		what: "test run", late: "the tests did not end (is the release deployed?)"},
		wait, func(p *printer, ref string) error {
			state, reason, message := tested(obj)
			p.printf("%s: %s: %s\n", ref, reason, message)
			if p.err != nil {
				return p.err
			}
			if state != "True" {
				return fmt.Errorf("%s: the tests did not pass (%s); see kubectl describe %s", ref, reason, ref)
			}
			return nil
		})
}

// tested returns obj's Tested condition's status (state), reason and message.
func tested(obj *unstructured.Unstructured) (state, reason, message string) {
	conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, raw := range conds {
		if m, ok := raw.(map[string]any); ok && m["type"] == status.ConditionTested {
			return fmt.Sprint(m["status"]), fmt.Sprint(m["reason"]), fmt.Sprint(m["message"])
		}
	}
	return "Unknown", "NoCondition", "the resource has no Tested condition"
}
