package bundle

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

func TestDisplayName(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{name: "a kind of two words", in: "WebApp", want: "Web App"},
		{name: "a kind of one word", in: "Database", want: "Database"},
		{name: "a field", in: "readyReplicas", want: "Ready Replicas"},
		{name: "a field of many words", in: "lastHandledReconcileAt", want: "Last Handled Reconcile At"},
		{name: "an acronym", in: "cidr", want: "CIDR"},
		{name: "capitals in a row stay one word", in: "podIP", want: "Pod IP"},
		{name: "empty", in: "", want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := displayName(tt.in); got != tt.want {
				t.Errorf("displayName(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestSpecDescriptors(t *testing.T) {
	spec := apiextensionsv1.JSONSchemaProps{Properties: map[string]apiextensionsv1.JSONSchemaProps{
		"replicas":   {Type: "integer", Description: "Pods."},
		"port":       {Type: "integer"},
		"enabled":    {Type: "boolean"},
		"image":      {Type: "string"},
		"policy":     {Type: "string", Enum: []apiextensionsv1.JSON{{Raw: []byte(`"Retain"`)}, {Raw: []byte(`"Delete"`)}}},
		"size":       {XIntOrString: true},
		"ingress":    {Type: "object"},
		"affinity":   {Type: "object"},
		"resources":  {Type: "object"},
		"extraHosts": {Type: "array"},
	}}
	want := map[string][]string{
		"replicas":   {xPodCount},
		"port":       {xNumber},
		"enabled":    {xBooleanSwitch},
		"image":      {xText},
		"policy":     {xSelectPrefix + "Retain", xSelectPrefix + "Delete"},
		"size":       {xText},
		"ingress":    nil,
		"affinity":   {xAdvanced},
		"resources":  {xResourceRequirements},
		"extraHosts": nil,
	}
	got := map[string][]string{}
	var paths []string
	for _, d := range specDescriptors(spec) {
		got[d.Path] = d.XDescriptors
		paths = append(paths, d.Path)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("x-descriptors = %v, want %v", got, want)
	}
	wantPaths := []string{"affinity", "enabled", "extraHosts", "image", "ingress", "policy", "port", "replicas", "resources", "size"}
	if !reflect.DeepEqual(paths, wantPaths) {
		t.Errorf("paths = %v, want every field once, sorted: %v", paths, wantPaths)
	}
}

func TestStatusDescriptors(t *testing.T) {
	status := apiextensionsv1.JSONSchemaProps{Properties: map[string]apiextensionsv1.JSONSchemaProps{
		"phase":              {Type: "string"},
		"message":            {Type: "string"},
		"conditions":         {Type: "array"},
		"readyReplicas":      {Type: "integer"},
		"observedGeneration": {Type: "integer"},
		"release":            {Type: "object"},
	}}
	want := map[string][]string{
		"phase":              {xPhase},
		"message":            {xPhaseReason},
		"conditions":         {xConditions},
		"readyReplicas":      {xPodCount},
		"observedGeneration": {xStatusText},
		"release":            nil,
	}
	got := map[string][]string{}
	for _, d := range statusDescriptors(status) {
		got[d.Path] = d.XDescriptors
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("x-descriptors = %v, want %v", got, want)
	}
}

func TestReadmeOpening(t *testing.T) {
	tests := []struct {
		name, readme, opening, summary string
		wantErr                        bool
	}{
		{
			name:    "title, opening, sections",
			readme:  "# tool\n\ntool is a thing that does X: it reads\nand writes.\n\nMore.\n\n## Use\n\nRun it.\n",
			opening: "tool is a thing that does X: it reads\nand writes.\n\nMore.",
			summary: "tool is a thing that does X.",
		},
		{
			name:    "a first sentence without a colon",
			readme:  "# tool\nShort. Then more.\n",
			opening: "Short. Then more.",
			summary: "Short.",
		},
		{name: "no opening", readme: "# tool\n\n## Use\n", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "README.md")
			if err := os.WriteFile(path, []byte(tt.readme), 0o644); err != nil {
				t.Fatal(err)
			}
			opening, summary, err := readmeOpening(path)
			if (err != nil) != tt.wantErr {
				t.Fatalf("readmeOpening() error = %v, want an error: %v", err, tt.wantErr)
			}
			if opening != tt.opening || summary != tt.summary {
				t.Errorf("readmeOpening() = %q, %q; want %q, %q", opening, summary, tt.opening, tt.summary)
			}
		})
	}
}
