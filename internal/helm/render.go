package helm

import (
	"context"
	"fmt"
	"log/slog"

	"helm.sh/helm/v4/pkg/action"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Rendered is what a chart renders for one set of values, without a cluster.
type Rendered struct {
	// Objects are the release's manifests, in manifest order.
	Objects []*unstructured.Unstructured
	// Hooks are the objects of the chart's Helm hooks (helm.sh/hook), tests
	// included, in Helm's order.
	Hooks []*unstructured.Unstructured
	// Tests is true when at least one hook is a test (helm.sh/hook: test).
	Tests bool
}

// Render renders chrt as release name in namespace with vals, as `helm
// template` does: client only, Helm's default capabilities, no cluster read
// (a template's lookup finds nothing). vals are validated against the chart's
// schema. It changes nothing anywhere; it serves to learn which objects a
// chart can make (`rudder rbac`), not to install them.
func Render(ctx context.Context, chrt *Chart, namespace, name string, vals map[string]any) (*Rendered, error) {
	in := action.NewInstall(action.NewConfiguration(action.ConfigurationSetLogger(slog.DiscardHandler)))
	in.DryRunStrategy, in.Replace = action.DryRunClient, true
	in.ReleaseName, in.Namespace = name, namespace
	in.DisableOpenAPIValidation = true
	r, err := in.RunWithContext(ctx, chrt.chart, vals)
	if err != nil {
		return nil, fmt.Errorf("rendering chart %s: %w", chrt.Name(), err)
	}
	rel, err := v1(r)
	if err != nil {
		return nil, fmt.Errorf("rendering chart %s: %w", chrt.Name(), err)
	}
	out := &Rendered{}
	if out.Objects, err = ParseManifest(rel.Manifest); err != nil {
		return nil, fmt.Errorf("rendering chart %s: %w", chrt.Name(), err)
	}
	for _, h := range rel.Hooks {
		objs, err := ParseManifest(h.Manifest)
		if err != nil {
			return nil, fmt.Errorf("rendering chart %s: hook %s: %w", chrt.Name(), h.Path, err)
		}
		out.Hooks = append(out.Hooks, objs...)
		out.Tests = out.Tests || isTest(h)
	}
	return out, nil
}
