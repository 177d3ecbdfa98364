package bundle_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/operator-framework/api/pkg/manifests"
	"github.com/operator-framework/api/pkg/validation"
	validationerrors "github.com/operator-framework/api/pkg/validation/errors"
)

// olmValidators are the checks `operator-sdk bundle validate` runs by default, and those OperatorHub runs on
// what it publishes.
var olmValidators = validation.DefaultBundleValidators.WithValidators(
	validation.OperatorHubV2Validator,
	validation.StandardCategoriesValidator,
	validation.StandardCapabilitiesValidator,
	validation.GoodPracticesValidator,
	validation.AlphaDeprecatedAPIsValidator,
)

// acceptedWarnings are validator warnings the bundle has on purpose, with why; a warning's detail ends with
// its key.
var acceptedWarnings = map[string]string{
	"csv.Spec.Icon not specified": "the icon is optional and rudder has none",
}

// validate loads the bundle in dir as OLM does and runs olmValidators on it, returning what they report.
func validate(t *testing.T, dir string) (errs, warns []validationerrors.Error) {
	t.Helper()
	b, err := manifests.GetBundleFromDir(dir)
	if err != nil {
		return []validationerrors.Error{{Type: validationerrors.ErrorInvalidBundle, Level: validationerrors.LevelError, Detail: err.Error()}}, nil
	}
	// The Kubernetes version the deprecated-APIs check looks ahead to: the one rudder is tested with.
	objs := append(b.ObjectsToValidate(), map[string]string{"k8s-version": "1.37"})
	for _, r := range olmValidators.Validate(objs...) {
		errs = append(errs, r.Errors...)
		warns = append(warns, r.Warnings...)
	}
	return errs, warns
}

// TestBundle_OLMValidators runs operator-framework's own validators on the bundle of the repository.
func TestBundle_OLMValidators(t *testing.T) {
	errs, warns := validate(t, repoBundle)
	for _, e := range errs {
		t.Errorf("OLM validation error: %s", e)
	}
	for _, w := range warns {
		accepted := false
		for detail := range acceptedWarnings {
			accepted = accepted || strings.HasSuffix(w.Detail, detail)
		}
		if !accepted {
			t.Errorf("OLM validation warning: %s", w)
		}
	}
}

// TestBundle_OLMValidatorsFindFaults makes sure the validators above see the bundle at all: each broken copy of
// it must fail them.
func TestBundle_OLMValidatorsFindFaults(t *testing.T) {
	tests := []struct {
		name  string
		spoil func(t *testing.T, dir string)
		want  string
	}{
		{
			name: "an owned CRD missing",
			spoil: func(t *testing.T, dir string) {
				removeFile(t, filepath.Join(dir, "manifests", "samplecrd.k8s.io_networks.yaml"))
			},
			want: `owned CRD "samplecrd.k8s.io/v1, Kind=Network" not found`,
		},
		{
			name: "an example of a kind the CSV does not own",
			spoil: func(t *testing.T, dir string) {
				editFile(t, filepath.Join(dir, "manifests", "rudder.clusterserviceversion.yaml"),
					`"kind": "Network"`, `"kind": "Router"`)
			},
			want: "example must have a provided API",
		},
		{
			name: "a capability level OLM does not know",
			spoil: func(t *testing.T, dir string) {
				editFile(t, filepath.Join(dir, "manifests", "rudder.clusterserviceversion.yaml"),
					"capabilities: Full Lifecycle", "capabilities: Everything")
			},
			want: `"Everything" is not a valid capabilities level`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			copyTree(t, repoBundle, dir)
			tt.spoil(t, dir)
			errs, _ := validate(t, dir)
			var got []string
			for _, e := range errs {
				got = append(got, e.Error())
			}
			if !slices.ContainsFunc(got, func(s string) bool { return strings.Contains(s, tt.want) }) {
				t.Errorf("the validators did not report %q; they reported:\n  %s", tt.want, strings.Join(got, "\n  "))
			}
		})
	}
}

func removeFile(t *testing.T, name string) {
	t.Helper()
	if err := os.Remove(name); err != nil {
		t.Fatal(err)
	}
}

// editFile replaces old, which must be in the file, with with.
func editFile(t *testing.T, name, old, with string) {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), old) {
		t.Fatalf("%s does not contain %q", name, old)
	}
	if err := os.WriteFile(name, []byte(strings.Replace(string(data), old, with, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// copyTree copies the files under src to dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}
