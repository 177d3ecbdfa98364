package rbac

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/rudder-operator/rudder/internal/helm"
)

// Sample returns the first resource of kind gvk in the YAML files of dir (a
// kubebuilder layout's config/samples), nil when there is none or dir does
// not exist.
func Sample(dir string, gvk schema.GroupVersionKind) (*unstructured.Unstructured, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		objs, err := helm.ParseManifest(string(data))
		if err != nil {
			return nil, fmt.Errorf("sample %s: %w", f, err)
		}
		for _, o := range objs {
			if o.GroupVersionKind() == gvk {
				return o, nil
			}
		}
	}
	return nil, nil
}
