package bench

import (
	"fmt"
	"path"
	"sort"
	"strings"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/releaseutil"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// webAppSpec is the spec of every WebApp of a run: its Helm values.
func webAppSpec(image string, replicas int) map[string]any {
	return map[string]any{"replicas": int64(replicas), "image": image, "port": int64(80)}
}

// renderWebApp renders the objects Helm would install for the WebApp name in
// namespace ns with the given spec, under rudder's release name
// "webapp-<name>" (the chart names every object <name> either way). Hooks and
// NOTES.txt are not objects of the release and are left out.
func renderWebApp(c *chart.Chart, ns, name string, spec map[string]any) ([]*unstructured.Unstructured, error) {
	opts := chartutil.ReleaseOptions{Name: "webapp-" + name, Namespace: ns, Revision: 1, IsInstall: true}
	vals, err := chartutil.ToRenderValues(c, spec, opts, nil)
	if err != nil {
		return nil, fmt.Errorf("values of %s: %w", name, err)
	}
	files, err := engine.Render(c, vals)
	if err != nil {
		return nil, fmt.Errorf("rendering %s: %w", name, err)
	}
	names := make([]string, 0, len(files))
	for f := range files {
		if strings.HasSuffix(f, ".yaml") || strings.HasSuffix(f, ".yml") {
			if base := path.Base(f); !strings.HasPrefix(base, "_") {
				names = append(names, f)
			}
		}
	}
	sort.Strings(names)
	var objs []*unstructured.Unstructured
	for _, f := range names {
		manifests := releaseutil.SplitManifests(files[f])
		keys := make([]string, 0, len(manifests))
		for k := range manifests {
			keys = append(keys, k)
		}
		sort.Sort(releaseutil.BySplitManifestsOrder(keys))
		for _, k := range keys {
			j, err := yaml.YAMLToJSON([]byte(manifests[k]))
			if err != nil {
				return nil, fmt.Errorf("%s of %s: %w", f, name, err)
			}
			if s := strings.TrimSpace(string(j)); s == "null" || s == "{}" {
				continue
			}
			u := &unstructured.Unstructured{}
			if err := u.UnmarshalJSON(j); err != nil {
				return nil, fmt.Errorf("%s of %s: %w", f, name, err)
			}
			if _, hook := u.GetAnnotations()["helm.sh/hook"]; hook {
				continue
			}
			if u.GetNamespace() == "" {
				u.SetNamespace(ns)
			}
			objs = append(objs, u)
		}
	}
	return objs, nil
}
