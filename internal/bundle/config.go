package bundle

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// object is one manifest of config/.
type object struct {
	*unstructured.Unstructured
	// file is the path it was read from.
	file string
	// doc is its YAML document as written there, without the file's other documents and separators.
	doc []byte
}

// kustomizeFields are the kustomization.yaml fields the bundle may ignore: namespace, because OLM installs
// into the namespace of the OperatorGroup, and images, because Options.Image sets the image. Any other field
// (patches, name prefixes, labels, generators) would change the objects in a way the bundle would not show,
// so loadKustomization refuses it.
var kustomizeFields = []string{"apiVersion", "kind", "resources", "namespace", "images"}

// loadKustomization returns the objects of dir's kustomization.yaml resources, in their order; a resource that
// is a directory is another kustomization, loaded the same way.
func loadKustomization(dir string) ([]object, error) {
	file := filepath.Join(dir, "kustomization.yaml")
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var k map[string]any
	if err := yaml.Unmarshal(data, &k); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	for field := range k {
		if !slices.Contains(kustomizeFields, field) {
			return nil, fmt.Errorf("%s: field %q would change the objects, and `rudder bundle` reads only the resources (and ignores namespace and images)", file, field)
		}
	}
	var resources struct {
		Resources []string `json:"resources"`
	}
	if err := yaml.Unmarshal(data, &resources); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	var objs []object
	for _, r := range resources.Resources {
		path := filepath.Join(dir, r)
		info, err := os.Stat(path)
		if err != nil {
			return nil, fmt.Errorf("%s: resource %q: %w", file, r, err)
		}
		var more []object
		if info.IsDir() {
			more, err = loadKustomization(path)
		} else {
			more, err = loadFile(path)
		}
		if err != nil {
			return nil, err
		}
		objs = append(objs, more...)
	}
	return objs, nil
}

// loadFile returns the objects of the YAML file path, skipping documents that hold only comments.
func loadFile(path string) ([]object, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var objs []object
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		js, err := yaml.YAMLToJSON(doc)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if strings.TrimSpace(string(js)) == "null" {
			continue
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(js); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		objs = append(objs, object{Unstructured: u, file: path, doc: doc})
	}
}
