package bundle_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rudder-operator/rudder/internal/bundle"
)

// TestGenerate_Errors breaks a copy of config/ in one way per case; Generate must refuse it with a message that
// says what is wrong.
func TestGenerate_Errors(t *testing.T) {
	tests := []struct {
		name    string
		spoil   func(t *testing.T, config string)
		version string
		want    string
	}{
		{
			name: "a kind the bundle cannot carry",
			spoil: func(t *testing.T, config string) {
				editFile(t, filepath.Join(config, "namespace", "namespace.yaml"), "kind: Namespace", "kind: LimitRange")
			},
			want: "LimitRange operators: the bundle cannot carry this kind",
		},
		{
			name: "no manager container",
			spoil: func(t *testing.T, config string) {
				editFile(t, filepath.Join(config, "manager", "manager.yaml"), "- name: manager", "- name: server")
			},
			want: `Deployment my-operator has no container "manager"`,
		},
		{
			name: "no WATCH_NAMESPACE to replace",
			spoil: func(t *testing.T, config string) {
				editFile(t, filepath.Join(config, "manager", "manager.yaml"), "- name: WATCH_NAMESPACE", "- name: NAMESPACES")
			},
			want: "sets no WATCH_NAMESPACE",
		},
		{
			name: "a field the Deployment type does not have",
			spoil: func(t *testing.T, config string) {
				editFile(t, filepath.Join(config, "manager", "manager.yaml"), "  replicas: 1", "  replica: 1")
			},
			want: `unknown field "spec.replica"`,
		},
		{
			name: "a sample of a kind no CRD defines",
			spoil: func(t *testing.T, config string) {
				editFile(t, filepath.Join(config, "samples", "network_v1_network.yaml"), "kind: Network", "kind: Router")
			},
			want: "sample example-network is of samplecrd.k8s.io/v1, Kind=Router, which no CRD of config/default defines",
		},
		{
			name: "a kustomize patch the bundle would not apply",
			spoil: func(t *testing.T, config string) {
				editFile(t, filepath.Join(config, "default", "kustomization.yaml"), "resources:", "namePrefix: rudder-\nresources:")
			},
			want: `field "namePrefix" would change the objects`,
		},
		{
			name: "a role bound to a user",
			spoil: func(t *testing.T, config string) {
				editFile(t, filepath.Join(config, "rbac", "role_binding.yaml"), "kind: ServiceAccount", "kind: User")
			},
			want: "ClusterRoleBinding my-operator-rolebinding: subject User my-operator: OLM binds roles to the operator's service accounts only",
		},
		{
			name: "a binding to a role config/ lacks",
			spoil: func(t *testing.T, config string) {
				editFile(t, filepath.Join(config, "rbac", "role_binding.yaml"), "name: my-operator-role\n", "name: admin\n")
			},
			want: "ClusterRoleBinding my-operator-rolebinding: ClusterRole admin is not in config/default",
		},
		{
			name: "a service account no binding grants anything",
			spoil: func(t *testing.T, config string) {
				editFile(t, filepath.Join(config, "manager", "manager.yaml"), "serviceAccountName: my-operator", "serviceAccountName: default")
			},
			want: `runs as service account "default", which no binding of config/default grants anything`,
		},
		{
			name:    "a version that is not semantic",
			spoil:   func(*testing.T, string) {},
			version: "1.0",
			want:    `version "1.0"`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			config := filepath.Join(t.TempDir(), "config")
			copyTree(t, repoConfig, config)
			tt.spoil(t, config)
			_, err := bundle.Generate(bundle.Options{ConfigDir: config, Readme: repoReadme, Version: tt.version})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Generate() error = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

// TestGenerate_Options checks that the same sources give the same bytes, and that the version and the image
// go where OLM reads them.
func TestGenerate_Options(t *testing.T) {
	opts := bundle.Options{ConfigDir: repoConfig, Readme: repoReadme, Version: "1.2.3", Image: "registry.example.com/rudder:v1.2.3"}
	first, err := bundle.Generate(opts)
	if err != nil {
		t.Fatal(err)
	}
	second, err := bundle.Generate(opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(first) != len(second) {
		t.Fatalf("Generate made %d files, then %d", len(first), len(second))
	}
	for i := range first {
		if first[i].Path != second[i].Path || !bytes.Equal(first[i].Data, second[i].Data) {
			t.Errorf("%s: two runs made different files", first[i].Path)
		}
	}
	dir := t.TempDir()
	if _, err := bundle.Write(dir, first); err != nil {
		t.Fatal(err)
	}
	csv := readCSV(t, dir)
	if csv.Name != "rudder.v1.2.3" || csv.Spec.Version.String() != "1.2.3" {
		t.Errorf("name %s, version %s; want rudder.v1.2.3 and 1.2.3", csv.Name, csv.Spec.Version)
	}
	if got := csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs[0].Spec.Template.Spec.Containers[0].Image; got != opts.Image {
		t.Errorf("the manager's image = %s, want %s", got, opts.Image)
	}
	if got := csv.Annotations["containerImage"]; got != opts.Image {
		t.Errorf("containerImage = %s, want %s", got, opts.Image)
	}
}

// TestWrite_Check writes a bundle and checks it as it goes stale in each way Check reports.
func TestWrite_Check(t *testing.T) {
	files, err := bundle.Generate(bundle.Options{ConfigDir: repoConfig, Readme: repoReadme})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	manifests := filepath.Join(dir, "manifests")
	writeBundle := func() []string {
		t.Helper()
		kept, err := bundle.Write(dir, files)
		if err != nil {
			t.Fatal(err)
		}
		return kept
	}
	check := func(want ...string) {
		t.Helper()
		problems, err := bundle.Check(dir, files)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(problems, "\n") != strings.Join(want, "\n") {
			t.Errorf("Check() = %q, want %q", problems, want)
		}
	}

	writeBundle()
	check()

	csv := filepath.Join(dir, filepath.FromSlash(bundle.CSVPath))
	editFile(t, csv, "maturity: stable", "maturity: alpha")
	check("stale: " + csv)

	removeFile(t, csv)
	check("missing: " + csv)

	// A CRD an earlier run copied, of a kind since removed, goes; a file rudder did not write stays.
	stale := filepath.Join(manifests, "old.example.com_olds.yaml")
	mine := filepath.Join(manifests, "service.yaml")
	writeFile(t, stale, "# Generated by `make bundle` (rudder bundle): a copy of config/crd/bases/old.example.com_olds.yaml.\n")
	writeFile(t, mine, "apiVersion: v1\nkind: Service\n")
	if kept := writeBundle(); len(kept) != 1 || kept[0] != "manifests/service.yaml" {
		t.Errorf("Write() kept %q, want only manifests/service.yaml", kept)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("Write() left the stale generated file %s (%v)", stale, err)
	}
	check("extra: " + mine + " (the bundle does not generate it)")
}

func writeFile(t *testing.T, name, data string) {
	t.Helper()
	if err := os.WriteFile(name, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}
