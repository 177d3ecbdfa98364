package cli

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rudder-operator/rudder/internal/rollout"
)

// rolloutOptions are the flags of `rudder rollout`.
type rolloutOptions struct {
	// name picks one ChartRollout when the kind has several current ones (managers serving other namespaces).
	name string
}

func newRolloutCommand(e *env) *cobra.Command {
	var o rolloutOptions
	cmd := &cobra.Command{
		Use:   "rollout status|pause|resume|undo <kind>",
		Short: "Show and steer the rollout of a kind's chart change (ChartRollout)",
		Long: `A change of a kind's chart reaches its resources in the steps of its watches.yaml rollout, as a
ChartRollout (cluster-scoped) that rudder creates and moves. This command shows the kind's current
rollout and steers it; each verb is a patch of the ChartRollout's spec, which kubectl patch can make too:
  status  the step, the resources on the chart, those that failed, and how long each step took
  pause   promote no other resource (spec.paused: true); those upgrading finish
  resume  go on: a paused rollout, or a halted one with its failure budget whole again
          (spec.paused: false, spec.resumedAt: now)
  undo    take every resource promoted back to the chart it had, with its current spec (spec.undo: true)`,
		Example: e.examples(`  # Where the WebApp chart change is
  rudder rollout status webapp

  # Halted on a bad chart: take the canaries back
  rudder rollout undo webapp

  # The failures were the tenants' own: go on
  rudder rollout resume webapp`),
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 2 || !slices.Contains([]string{"status", "pause", "resume", "undo"}, args[0]) {
				return fmt.Errorf("want a verb (status, pause, resume or undo) and a kind, such as `rollout status webapp`; got %q", strings.Join(args, " "))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := e.connect()
			if err != nil {
				return err
			}
			cr, err := c.currentRollout(cmd.Context(), args[1], o.name)
			if err != nil {
				return err
			}
			if args[0] == "status" {
				return printRollout(e.io.Out, cr, time.Now())
			}
			return c.steer(cmd.Context(), e.io.Out, cr, args[0])
		},
	}
	cmd.Flags().StringVar(&o.name, "name", "", "the ChartRollout to act on, when the kind has several current ones")
	return cmd
}

// currentRollout returns the kind's ChartRollout that is not superseded, or
// the one named name.
func (c *conn) currentRollout(ctx context.Context, kind, name string) (*rollout.ChartRollout, error) {
	gvk, err := c.kindOf(kind)
	if err != nil {
		return nil, err
	}
	list := rollout.NewList()
	if err := c.client.List(ctx, list, client.MatchingLabels{rollout.LabelKind: rollout.LabelValue(gvk)}); err != nil {
		if meta.IsNoMatchError(err) {
			return nil, fmt.Errorf("the cluster has no ChartRollout kind: apply config/crd/bases/%s (make deploy does)", rollout.CRDFile)
		}
		return nil, fmt.Errorf("listing the ChartRollouts of kind %s: %w", gvk.Kind, err)
	}
	var current []*rollout.ChartRollout
	for i := range list.Items {
		cr, err := rollout.FromUnstructured(&list.Items[i])
		if err != nil {
			return nil, err
		}
		if name != "" && cr.Name == name || name == "" && cr.Status.Phase != rollout.PhaseSuperseded {
			current = append(current, cr)
		}
	}
	switch {
	case len(current) == 0 && name != "":
		return nil, fmt.Errorf("kind %s has no ChartRollout %s; see kubectl get chartrollouts -l %s=%s", gvk.Kind, name, rollout.LabelKind, rollout.LabelValue(gvk))
	case len(current) == 0:
		return nil, fmt.Errorf("kind %s has no ChartRollout: rudder creates one when it starts with the kind's chart; is it running?", gvk.Kind)
	case len(current) > 1:
		names := make([]string, len(current))
		for i, cr := range current {
			names[i] = cr.Name
		}
		return nil, fmt.Errorf("kind %s has %d current ChartRollouts, one per manager serving its own namespaces: pick one with --name (%s)",
			gvk.Kind, len(current), strings.Join(names, ", "))
	}
	return current[0], nil
}

// kindOf resolves a kind as kubectl names it (webapp, webapps, webapp.webapp.my.domain).
func (c *conn) kindOf(kind string) (schema.GroupVersionKind, error) {
	gvr, err := c.mapper.ResourceFor(schema.ParseGroupResource(strings.ToLower(kind)).WithVersion(""))
	if err != nil {
		return schema.GroupVersionKind{}, fmt.Errorf("kind %q: %w", kind, err)
	}
	gvk, err := c.mapper.KindFor(gvr)
	if err != nil {
		return schema.GroupVersionKind{}, fmt.Errorf("kind %q: %w", kind, err)
	}
	return gvk, nil
}

// steer patches cr's spec as verb asks.
func (c *conn) steer(ctx context.Context, out io.Writer, cr *rollout.ChartRollout, verb string) error {
	var patch string
	switch verb {
	case "pause":
		patch = `{"spec":{"paused":true}}`
	case "resume":
		patch = fmt.Sprintf(`{"spec":{"paused":false,"resumedAt":%q}}`, time.Now().UTC().Format(time.RFC3339))
	case "undo":
		patch = `{"spec":{"undo":true}}`
	}
	u := rollout.New()
	u.SetName(cr.Name)
	if err := c.client.Patch(ctx, u, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		return fmt.Errorf("patching ChartRollout %s: %w", cr.Name, err)
	}
	p := &printer{w: out}
	p.printf("chartrollout/%s (kind %s, chart %s): %s requested; see rudder rollout status %s\n",
		cr.Name, cr.Spec.Kind, cr.Spec.Chart, verb, strings.ToLower(cr.Spec.Kind))
	return p.err
}

// printRollout writes cr as `rudder rollout status` shows it.
func printRollout(out io.Writer, cr *rollout.ChartRollout, now time.Time) error {
	p := &printer{w: out}
	st := cr.Status
	p.printf("ChartRollout %s: kind %s, chart %s\n", cr.Name, cr.Spec.Kind, cr.Spec.Chart)
	phase := cmp.Or(st.Phase, "Pending (rudder has not counted it yet)")
	p.printf("Phase:   %s\n", phase)
	p.printf("Step:    %s\n", cmp.Or(st.StepText, "-"))
	p.printf("Updated: %d of %d (%d Ready), failed %d\n", st.Updated, st.Total, st.Ready, st.Failed)
	if len(st.History) > 0 {
		p.printf("Steps:\n")
		for _, h := range st.History {
			took := "under way for " + now.Sub(h.Started.Time).Round(time.Second).String()
			if h.Completed != nil {
				took = "took " + h.Completed.Sub(h.Started.Time).Round(time.Second).String()
			}
			p.printf("  %d (%s): started %s, %s\n", h.Step, h.Size, h.Started.UTC().Format(time.RFC3339), took)
		}
	}
	if len(st.FailedResources) > 0 {
		p.printf("Failed:\n")
		for _, f := range st.FailedResources {
			p.printf("  %s/%s: %s: %s\n", f.Namespace, f.Name, f.Reason, f.Message)
		}
	}
	for _, c := range st.Conditions {
		p.printf("%s=%s (%s): %s\n", c.Type, c.Status, c.Reason, c.Message)
	}
	return p.err
}
