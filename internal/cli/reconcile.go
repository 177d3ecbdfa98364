package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rudder-operator/rudder/internal/reconcile/status"
)

func newReconcileCommand(e *env) *cobra.Command {
	var wait time.Duration
	cmd := &cobra.Command{
		Use:   "reconcile <kind>/<name>",
		Short: "Ask rudder to reconcile a resource now, and wait until a reconcile has seen it",
		Long: `Ask rudder to reconcile a resource now: the command sets the annotation
rudder.dev/reconcile-requested-at to the time and, with --wait, waits until the resource's
status.lastHandledReconcileAt echoes it, then prints the resource's phase.`,
		Example: e.examples(`  # Reconcile WebApp my-webapp now and wait up to 2 minutes
  rudder reconcile webapp/my-webapp

  # Only ask
  rudder reconcile webapp/my-webapp -n shop --wait 0`),
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
			return c.reconcile(cmd.Context(), e.io.Out, obj, wait)
		},
	}
	waitFlag(cmd, &wait, 2*time.Minute, "a reconcile to see the request")
	return cmd
}

// reconcile asks rudder to reconcile obj now (annotation
// reconcile.AnnotationReconcileRequestedAt set to the time) and, with wait,
// waits until the resource's status says a reconcile has seen that request.
func (c *conn) reconcile(ctx context.Context, out io.Writer, obj *unstructured.Unstructured, wait time.Duration) error {
	return c.ask(ctx, out, obj, request{annotation: status.AnnotationReconcileRequestedAt, handled: "lastHandledReconcileAt",
		what: "reconcile", late: "no reconcile saw the request"},
		wait, func(p *printer, ref string) error {
			phase, _, _ := unstructured.NestedString(obj.Object, "status", "phase")
			message, _, _ := unstructured.NestedString(obj.Object, "status", "message")
			p.printf("%s: reconciled; phase %s: %s\n", ref, phase, message)
			return p.err
		})
}

// request is something asked of rudder through an annotation whose value,
// a new time, a status field echoes once it is done.
type request struct {
	annotation, handled string // the annotation, and the status field that echoes it
	what                string // what is asked, as "reconcile" in "reconcile requested"
	late                string // what a wait that ran out says, as "no reconcile saw the request"
}

// ask sets req's annotation on obj to the time and, with wait, waits until
// obj's status echoes it; then answered reports on obj, read again.
func (c *conn) ask(ctx context.Context, out io.Writer, obj *unstructured.Unstructured, req request, wait time.Duration,
	answered func(p *printer, ref string) error) error {
	token := time.Now().UTC().Format(time.RFC3339Nano)
	patch := fmt.Appendf(nil, `{"metadata":{"annotations":{%q:%q}}}`, req.annotation, token)
	if err := c.client.Patch(ctx, obj, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return fmt.Errorf("asking for a %s: %w", req.what, err)
	}
	p := &printer{w: out}
	ref := strings.ToLower(obj.GetKind()) + "/" + obj.GetName()
	p.printf("%s: %s requested (annotation %s=%s)\n", ref, req.what, req.annotation, token)
	if wait == 0 {
		return p.err
	}
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	for {
		if err := c.client.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return err
		}
		if handled, _, _ := unstructured.NestedString(obj.Object, "status", req.handled); handled == token {
			return answered(p, ref)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s within %s: is rudder running? see kubectl describe %s", req.late, wait, ref)
		case <-time.After(500 * time.Millisecond):
		}
	}
}
