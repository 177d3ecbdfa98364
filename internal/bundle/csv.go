package bundle

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/blang/semver/v4"
	"github.com/operator-framework/api/pkg/lib/version"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// repository is the project's home, the module path's.
const repository = "https://github.com/rudder-operator/rudder"

// minKubeVersion is the oldest Kubernetes whose API server accepts the CRDs: the Network kind's CEL rules call
// isIP, isCIDR and cidr(), which CEL has in Kubernetes from 1.31 on.
const minKubeVersion = "1.31.0"

// installModes are the ones of the user's guide's CSV. rudder reconciles the namespaces of WATCH_NAMESPACE (one,
// several or all), but the guide leaves MultiNamespace out, as OLM itself discourages it.
var installModes = []operatorsv1alpha1.InstallMode{
	{Type: operatorsv1alpha1.InstallModeTypeOwnNamespace, Supported: true},
	{Type: operatorsv1alpha1.InstallModeTypeSingleNamespace, Supported: true},
	{Type: operatorsv1alpha1.InstallModeTypeMultiNamespace, Supported: false},
	{Type: operatorsv1alpha1.InstallModeTypeAllNamespaces, Supported: true},
}

// csvAnnotations are the fixed metadata.annotations of the CSV; clusterServiceVersion adds the ones it derives.
var csvAnnotations = map[string]string{
	// Level 3 of the Operator Capability Levels: rudder installs, upgrades, rolls back and remediates
	// releases, and the Database kind backs up and restores its data.
	"capabilities": "Full Lifecycle",
	// One category per kind: WebApp, Database and Network.
	"categories": "Application Runtime, Database, Networking",
	"repository": repository,
	// rudder creates the ChartRollouts itself: the console offers no form to
	// create one, and no example is needed.
	"operators.operatorframework.io/internal-objects": `["chartrollouts.rudder.dev"]`,
}

// clusterServiceVersion describes the operator that config/ deploys for OLM.
func clusterServiceVersion(src *sources, o Options) (*operatorsv1alpha1.ClusterServiceVersion, error) {
	v, err := semver.Parse(o.Version)
	if err != nil {
		return nil, fmt.Errorf("version %q: %w", o.Version, err)
	}
	opening, summary, err := readmeOpening(o.Readme)
	if err != nil {
		return nil, err
	}
	install, err := installStrategy(src, o.Image)
	if err != nil {
		return nil, err
	}
	owned := ownedCRDs(src.crds)
	examples, err := almExamples(src.samples, owned)
	if err != nil {
		return nil, err
	}
	annotations := map[string]string{
		"alm-examples":   examples,
		"containerImage": o.Image,
		"description":    summary,
		// The namespace config/default installs into, which the user's guide's commands use.
		"operatorframework.io/suggested-namespace": src.deployment.Namespace,
	}
	for k, val := range csvAnnotations {
		annotations[k] = val
	}
	keywords := []string{"helm", "charts", "hybrid operator"}
	for _, c := range src.crds {
		keywords = append(keywords, strings.ToLower(c.Spec.Names.Kind))
	}
	return &operatorsv1alpha1.ClusterServiceVersion{
		TypeMeta: metav1.TypeMeta{APIVersion: operatorsv1alpha1.SchemeGroupVersion.String(), Kind: operatorsv1alpha1.ClusterServiceVersionKind},
		ObjectMeta: metav1.ObjectMeta{
			Name:        Package + ".v" + v.String(),
			Annotations: annotations,
		},
		Spec: operatorsv1alpha1.ClusterServiceVersionSpec{
			DisplayName:    Package,
			Description:    opening,
			Version:        version.OperatorVersion{Version: v},
			Maturity:       "stable", // as the user's guide's CSV says
			MinKubeVersion: minKubeVersion,
			Keywords:       keywords,
			Provider:       operatorsv1alpha1.AppLink{Name: "rudder-operator", URL: repository},
			Links: []operatorsv1alpha1.AppLink{
				{Name: "Source code", URL: repository},
				{Name: "Documentation", URL: repository + "#readme"},
			},
			InstallModes:              installModes,
			InstallStrategy:           install,
			CustomResourceDefinitions: operatorsv1alpha1.CustomResourceDefinitions{Owned: owned},
		},
	}, nil
}

// almExamples is the JSON list of samples, the custom resources the console offers to start from. Each must
// be of an owned kind.
func almExamples(samples []object, owned []operatorsv1alpha1.CRDDescription) (string, error) {
	list := make([]map[string]any, 0, len(samples))
	for _, s := range samples {
		gvk := s.GroupVersionKind()
		isOwned := func(d operatorsv1alpha1.CRDDescription) bool {
			_, group, _ := strings.Cut(d.Name, ".") // <plural>.<group>
			return d.Kind == gvk.Kind && d.Version == gvk.Version && group == gvk.Group
		}
		if !slices.ContainsFunc(owned, isOwned) {
			return "", fmt.Errorf("%s: sample %s is of %s, which no CRD of config/default defines", s.file, s.GetName(), gvk)
		}
		example := s.DeepCopy()
		// The console creates an example in the namespace the user is in, which
		// is the one an OwnNamespace install watches; a fixed one would be wrong.
		example.SetNamespace("")
		list = append(list, example.Object)
	}
	// What rudder creates when WebApp's chart changes: OLM wants an example
	// of every owned kind, internal ones too.
	list = append(list, map[string]any{
		"apiVersion": "rudder.dev/v1alpha1", "kind": "ChartRollout",
		"metadata": map[string]any{"name": "webapp.webapp.my.domain-0123456789ab"},
		"spec":     map[string]any{"group": "webapp.my.domain", "kind": "WebApp", "chart": "webapp-0.2.0", "chartDigest": "0123456789abcdef0123456789abcdef"},
	})
	js, err := json.MarshalIndent(list, "", "  ")
	return string(js), err
}
