package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rudder-operator/rudder/internal/helm"
	"github.com/rudder-operator/rudder/internal/reconcile/status"
	"github.com/rudder-operator/rudder/internal/stored"
)

// rollbackOptions are the flags of `rudder rollback`.
type rollbackOptions struct {
	// to is the revision to roll back to. Default 0: the revision before the deployed one.
	to int
	// wait is how long to wait for the rollback to be deployed. Default 0: do not wait.
	wait time.Duration
}

func newRollbackCommand(e *env) *cobra.Command {
	var o rollbackOptions
	cmd := &cobra.Command{
		Use:   "rollback <kind>/<name>",
		Short: "Roll a resource's release back to a revision and keep it there (helm rollback)",
		Long: `Roll the Helm release of a resource rudder serves back to revision --to (default: the revision
before the deployed one), as helm rollback does, and keep it there until the spec changes or the
annotation is removed. The command only asks, with the annotation rudder.dev/rollback-to; rudder
makes the new revision. With --wait it waits until rudder has deployed it.`,
		Example: e.examples(`  # Back to the revision before the deployed one, and wait until it is deployed
  rudder rollback webapp/my-webapp --wait 2m

  # Back to revision 3 (see rudder history), in namespace shop
  rudder rollback webapp/my-webapp --to 3 -n shop`),
		Args:              resourceArgs,
		ValidArgsFunction: e.completeResource,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkWait(o.wait); err != nil {
				return err
			}
			if o.to < 0 {
				return fmt.Errorf("flag --to: %d is not a revision; use a revision of rudder history, or leave --to out for the one before the deployed one", o.to)
			}
			c, obj, err := e.resource(cmd.Context(), args)
			if err != nil {
				return err
			}
			revs, err := c.history(obj)
			if err != nil {
				return err
			}
			return c.rollback(cmd.Context(), e.io.Out, obj, revs, o.to, o.wait)
		},
	}
	cmd.Flags().IntVar(&o.to, "to", 0, "the revision to roll back to (default: the revision before the deployed one)")
	waitFlag(cmd, &o.wait, 0, "the rollback to be deployed")
	return cmd
}

// rollback asks rudder to roll back to revision `to` (default: the newest
// revision before the deployed one) and, with wait, waits until it has.
func (c *conn) rollback(ctx context.Context, out io.Writer, obj *unstructured.Unstructured, revs []*helm.Release, to int, wait time.Duration) error {
	if to == 0 {
		to = previous(revs)
		if to == 0 {
			return errors.New("there is no revision before the deployed one to roll back to; pick one with --to")
		}
	}
	known := false
	for _, r := range revs {
		known = known || r.Revision == to
	}
	if !known {
		return fmt.Errorf("revision %d is not in the release's history; see `rudder history`", to)
	}
	patch := fmt.Appendf(nil, `{"metadata":{"annotations":{%q:%q}}}`, status.AnnotationRollbackTo, strconv.Itoa(to))
	if err := c.client.Patch(ctx, obj, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return fmt.Errorf("asking for the rollback: %w", err)
	}
	p := &printer{w: out}
	p.printf("%s/%s: rollback to revision %d requested (annotation %s)\n", strings.ToLower(obj.GetKind()), obj.GetName(), to, status.AnnotationRollbackTo)
	if wait == 0 {
		return p.err
	}
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	release, newest := revs[0].Name, revs[0].Revision // History is newest first
	for {
		msg, done, err := c.rolledBack(ctx, obj, release, newest, to)
		if err != nil {
			return err
		}
		if done {
			p.printf("%s\n", msg)
			return p.err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the rollback was not deployed within %s: is rudder running? see kubectl describe", wait)
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// rolledBack reports whether the rollback to revision `to` asked for when
// the newest revision was `newest` is done: a newer revision made for it is
// deployed, and the resource's status shows it as Released. It returns the
// Released condition's message then.
func (c *conn) rolledBack(ctx context.Context, obj *unstructured.Unstructured, release string, newest, to int) (string, bool, error) {
	revs, err := c.helm.History(obj.GetNamespace(), release, obj.GetUID())
	if err != nil {
		return "", false, err
	}
	made := 0
	for _, r := range revs {
		if r.Revision > newest && r.Status == "deployed" && r.Labels[stored.LabelRollbackTo] == strconv.Itoa(to) {
			made = r.Revision
		}
	}
	if made == 0 {
		return "", false, nil
	}
	if err := c.client.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
		return "", false, err
	}
	if rev, _, _ := unstructured.NestedInt64(obj.Object, "status", "release", "revision"); rev != int64(made) {
		return "", false, nil
	}
	conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, raw := range conds {
		if m, ok := raw.(map[string]any); ok && m["type"] == status.ConditionReleased && m["status"] == "True" {
			return fmt.Sprint(m["message"]), true, nil
		}
	}
	return "", false, nil
}

// previous returns the newest revision older than the newest deployed one.
func previous(revs []*helm.Release) int {
	deployed := -1
	for i, r := range revs {
		if r.Status == "deployed" {
			deployed = i
			break
		}
	}
	if deployed < 0 || deployed+1 >= len(revs) {
		return 0
	}
	return revs[deployed+1].Revision
}
