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

// reconcile asks rudder to reconcile obj now (annotation
// reconcile.AnnotationReconcileRequestedAt set to the time) and, with wait,
// waits until the resource's status says a reconcile has seen that request.
func (c *conn) reconcile(ctx context.Context, out io.Writer, obj *unstructured.Unstructured, wait time.Duration) error {
	token := time.Now().UTC().Format(time.RFC3339Nano)
	patch := fmt.Appendf(nil, `{"metadata":{"annotations":{%q:%q}}}`, reconcile.AnnotationReconcileRequestedAt, token)
	if err := c.client.Patch(ctx, obj, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return fmt.Errorf("asking for a reconcile: %w", err)
	}
	p := &printer{w: out}
	ref := strings.ToLower(obj.GetKind()) + "/" + obj.GetName()
	p.printf("%s: reconcile requested (annotation %s=%s)\n", ref, reconcile.AnnotationReconcileRequestedAt, token)
	if wait == 0 {
		return p.err
	}
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	for {
		if err := c.client.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return err
		}
		if handled, _, _ := unstructured.NestedString(obj.Object, "status", "lastHandledReconcileAt"); handled == token {
			phase, _, _ := unstructured.NestedString(obj.Object, "status", "phase")
			message, _, _ := unstructured.NestedString(obj.Object, "status", "message")
			p.printf("%s: reconciled; phase %s: %s\n", ref, phase, message)
			return p.err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("no reconcile saw the request within %s: is rudder running? see kubectl describe %s", wait, ref)
		case <-time.After(500 * time.Millisecond):
		}
	}
}
