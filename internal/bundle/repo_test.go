package bundle_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/rudder-operator/rudder/internal/bundle"
)

// The repository's bundle and what it is made from, from this package's directory.
const (
	repoBundle = "../../bundle"
	repoConfig = "../../config"
	repoReadme = "../../README.md"
)

// readCSV reads the ClusterServiceVersion of the bundle in dir.
func readCSV(t *testing.T, dir string) *operatorsv1alpha1.ClusterServiceVersion {
	t.Helper()
	csv := &operatorsv1alpha1.ClusterServiceVersion{}
	readYAML(t, filepath.Join(dir, filepath.FromSlash(bundle.CSVPath)), csv)
	return csv
}

// readYAML decodes the one YAML document of the file name into v, refusing unknown fields. Documents of
// comments only, such as the header of a generated CRD, do not count.
func readYAML(t *testing.T, name string, v any) {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	found := false
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if js, err := yaml.YAMLToJSON(doc); err == nil && string(js) == "null" {
			continue
		}
		if found {
			t.Fatalf("%s has more than one document", name)
		}
		found = true
		if err := yaml.UnmarshalStrict(doc, v); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	if !found {
		t.Fatalf("%s has no document", name)
	}
}

// TestBundle_UpToDate fails when bundle/ is not what `make bundle` makes of config/ and the README now, so
// that CI catches a CRD, role or sample changed without the bundle. The version and image are the bundle's
// own: `make bundle VERSION=… IMG=…` may set them.
func TestBundle_UpToDate(t *testing.T) {
	csv := readCSV(t, repoBundle)
	files, err := bundle.Generate(bundle.Options{
		ConfigDir: repoConfig,
		Readme:    repoReadme,
		Version:   csv.Spec.Version.String(),
		Image:     csv.Annotations["containerImage"],
	})
	if err != nil {
		t.Fatal(err)
	}
	problems, err := bundle.Check(repoBundle, files)
	if err != nil {
		t.Fatal(err)
	}
	if len(problems) > 0 {
		t.Errorf("bundle/ is stale; run make bundle:\n  %s", strings.Join(problems, "\n  "))
	}
}

// TestBundle_OwnedCRDsMatchConfig checks that the CSV owns exactly the CRDs of config/crd/bases, and that each
// is in bundle/manifests as config/crd/bases has it.
func TestBundle_OwnedCRDsMatchConfig(t *testing.T) {
	csv := readCSV(t, repoBundle)
	sources, err := filepath.Glob(filepath.Join(repoConfig, "crd", "bases", "*.yaml"))
	if err != nil || len(sources) == 0 {
		t.Fatalf("no CRDs in config/crd/bases (%v)", err)
	}
	var names []string
	for _, source := range sources {
		want := &apiextensionsv1.CustomResourceDefinition{}
		readYAML(t, source, want)
		names = append(names, want.Name)
		got := &apiextensionsv1.CustomResourceDefinition{}
		readYAML(t, filepath.Join(repoBundle, "manifests", filepath.Base(source)), got)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("bundle/manifests/%s differs from %s", filepath.Base(source), source)
		}
		for _, v := range want.Spec.Versions {
			owns := func(d operatorsv1alpha1.CRDDescription) bool {
				return d.Name == want.Name && d.Version == v.Name && d.Kind == want.Spec.Names.Kind
			}
			if !slices.ContainsFunc(csv.Spec.CustomResourceDefinitions.Owned, owns) {
				t.Errorf("the CSV does not own %s version %s (kind %s)", want.Name, v.Name, want.Spec.Names.Kind)
			}
		}
	}
	for _, d := range csv.Spec.CustomResourceDefinitions.Owned {
		if !slices.Contains(names, d.Name) {
			t.Errorf("the CSV owns %s, which config/crd/bases does not define", d.Name)
		}
		if d.DisplayName == "" || d.Description == "" || len(d.SpecDescriptors) == 0 || len(d.StatusDescriptors) == 0 {
			t.Errorf("owned CRD %s lacks a display name, a description, or spec or status descriptors", d.Name)
		}
	}
}

// TestBundle_PermissionsMatchRBAC checks that the CSV grants the manager's service account what config/rbac
// does: the ClusterRole's rules and the metrics reviews' everywhere, the leader election Role's in its own
// namespace; and that the bundle carries the metrics reader ClusterRole, which nothing in config/ binds.
func TestBundle_PermissionsMatchRBAC(t *testing.T) {
	csv := readCSV(t, repoBundle)
	clusterRole := &rbacv1.ClusterRole{}
	readYAML(t, filepath.Join(repoConfig, "rbac", "role.yaml"), clusterRole)
	metricsAuth := &rbacv1.ClusterRole{}
	readYAML(t, filepath.Join(repoConfig, "rbac", "metrics_auth_role.yaml"), metricsAuth)
	reader, bundled := &rbacv1.ClusterRole{}, &rbacv1.ClusterRole{}
	readYAML(t, filepath.Join(repoConfig, "rbac", "metrics_reader_role.yaml"), reader)
	readYAML(t, filepath.Join(repoBundle, "manifests", reader.Name+"_rbac.authorization.k8s.io_v1_clusterrole.yaml"), bundled)
	if !reflect.DeepEqual(bundled, reader) {
		t.Errorf("the bundle's ClusterRole %s = %+v, want config/rbac's %+v", reader.Name, bundled, reader)
	}
	role := &rbacv1.Role{}
	readYAML(t, filepath.Join(repoConfig, "rbac", "leader_election_role.yaml"), role)
	account := &unstructured.Unstructured{}
	readYAML(t, filepath.Join(repoConfig, "rbac", "service_account.yaml"), &account.Object)

	strategy := csv.Spec.InstallStrategy.StrategySpec
	want := []operatorsv1alpha1.StrategyDeploymentPermissions{{ServiceAccountName: account.GetName(), Rules: slices.Concat(clusterRole.Rules, metricsAuth.Rules)}}
	if !reflect.DeepEqual(strategy.ClusterPermissions, want) {
		t.Errorf("clusterPermissions = %+v, want the rules of %s and %s for %s", strategy.ClusterPermissions, clusterRole.Name, metricsAuth.Name, account.GetName())
	}
	want = []operatorsv1alpha1.StrategyDeploymentPermissions{{ServiceAccountName: account.GetName(), Rules: role.Rules}}
	if !reflect.DeepEqual(strategy.Permissions, want) {
		t.Errorf("permissions = %+v, want the rules of %s for %s", strategy.Permissions, role.Name, account.GetName())
	}
	if len(strategy.DeploymentSpecs) != 1 || strategy.DeploymentSpecs[0].Spec.Template.Spec.ServiceAccountName != account.GetName() {
		t.Errorf("the CSV's one Deployment should run as %s", account.GetName())
	}
}

// TestBundle_Structure checks the parts of the CSV and the annotations that OLM documents as required, and what
// rudder promises of them: the install modes of the user's guide, WATCH_NAMESPACE from the OperatorGroup, an
// example of every owned kind.
func TestBundle_Structure(t *testing.T) {
	csv := readCSV(t, repoBundle)
	if csv.APIVersion != "operators.coreos.com/v1alpha1" || csv.Kind != "ClusterServiceVersion" {
		t.Errorf("apiVersion and kind = %s %s", csv.APIVersion, csv.Kind)
	}
	if want := "rudder.v" + csv.Spec.Version.String(); csv.Name != want {
		t.Errorf("name = %q, want %q", csv.Name, want)
	}
	for field, value := range map[string]string{
		"spec.displayName":    csv.Spec.DisplayName,
		"spec.description":    csv.Spec.Description,
		"spec.maturity":       csv.Spec.Maturity,
		"spec.minKubeVersion": csv.Spec.MinKubeVersion,
		"spec.provider.name":  csv.Spec.Provider.Name,
		"capabilities":        csv.Annotations["capabilities"],
		"categories":          csv.Annotations["categories"],
		"description":         csv.Annotations["description"],
	} {
		if value == "" {
			t.Errorf("%s is empty", field)
		}
	}
	if len(csv.Spec.Keywords) == 0 || len(csv.Spec.Links) == 0 {
		t.Error("the CSV has no keywords or no links")
	}

	modes := map[operatorsv1alpha1.InstallModeType]bool{}
	for _, m := range csv.Spec.InstallModes {
		modes[m.Type] = m.Supported
	}
	wantModes := map[operatorsv1alpha1.InstallModeType]bool{"OwnNamespace": true, "SingleNamespace": true, "MultiNamespace": false, "AllNamespaces": true}
	if !reflect.DeepEqual(modes, wantModes) || len(csv.Spec.InstallModes) != len(wantModes) {
		t.Errorf("installModes = %+v, want %v", csv.Spec.InstallModes, wantModes)
	}

	if csv.Spec.InstallStrategy.StrategyName != "deployment" || len(csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs) != 1 {
		t.Fatalf("install strategy = %q with %d Deployments, want deployment with 1", csv.Spec.InstallStrategy.StrategyName, len(csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs))
	}
	containers := csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs[0].Spec.Template.Spec.Containers
	i := slices.IndexFunc(containers, func(c corev1.Container) bool { return c.Name == "manager" })
	if i < 0 {
		t.Fatal("the Deployment has no manager container")
	}
	if containers[i].Image != csv.Annotations["containerImage"] {
		t.Errorf("the manager's image %q is not the containerImage annotation %q", containers[i].Image, csv.Annotations["containerImage"])
	}
	watch := false
	for _, e := range containers[i].Env {
		if e.Name == "WATCH_NAMESPACE" {
			watch = e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.annotations['olm.targetNamespaces']"
		}
	}
	if !watch {
		t.Error("the manager's WATCH_NAMESPACE does not come from the olm.targetNamespaces annotation")
	}

	checkExamples(t, csv)
	checkAnnotationsFile(t)
}

// checkExamples checks that alm-examples is a JSON list with one example of each owned kind and of no other.
func checkExamples(t *testing.T, csv *operatorsv1alpha1.ClusterServiceVersion) {
	t.Helper()
	var examples []unstructured.Unstructured
	if err := json.Unmarshal([]byte(csv.Annotations["alm-examples"]), &examples); err != nil {
		t.Fatalf("alm-examples is not a JSON list of objects: %v", err)
	}
	seen := map[string]bool{}
	for _, e := range examples {
		gvk := e.GroupVersionKind()
		owns := func(d operatorsv1alpha1.CRDDescription) bool {
			_, group, _ := strings.Cut(d.Name, ".") // <plural>.<group>
			return d.Kind == gvk.Kind && d.Version == gvk.Version && group == gvk.Group
		}
		i := slices.IndexFunc(csv.Spec.CustomResourceDefinitions.Owned, owns)
		if i < 0 {
			t.Errorf("example %s is of %s, which the CSV does not own", e.GetName(), gvk)
			continue
		}
		seen[csv.Spec.CustomResourceDefinitions.Owned[i].Name] = true
	}
	var internal []string
	if err := json.Unmarshal([]byte(csv.Annotations["operators.operatorframework.io/internal-objects"]), &internal); err != nil {
		t.Fatalf("internal-objects is not a JSON list of CRD names: %v", err)
	}
	for _, d := range csv.Spec.CustomResourceDefinitions.Owned {
		if !seen[d.Name] && !slices.Contains(internal, d.Name) {
			t.Errorf("no example of owned kind %s", d.Kind)
		}
	}
}

// checkAnnotationsFile checks metadata/annotations.yaml, which tells OLM the bundle's format and package.
func checkAnnotationsFile(t *testing.T) {
	t.Helper()
	var file struct {
		Annotations map[string]string `json:"annotations"`
	}
	readYAML(t, filepath.Join(repoBundle, filepath.FromSlash(bundle.AnnotationsPath)), &file)
	want := map[string]string{
		"operators.operatorframework.io.bundle.mediatype.v1":       "registry+v1",
		"operators.operatorframework.io.bundle.manifests.v1":       "manifests/",
		"operators.operatorframework.io.bundle.metadata.v1":        "metadata/",
		"operators.operatorframework.io.bundle.package.v1":         "rudder",
		"operators.operatorframework.io.bundle.channels.v1":        "stable",
		"operators.operatorframework.io.bundle.channel.default.v1": "stable",
	}
	if !reflect.DeepEqual(file.Annotations, want) {
		t.Errorf("metadata/annotations.yaml = %v, want %v", file.Annotations, want)
	}
}
