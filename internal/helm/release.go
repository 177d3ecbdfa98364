package helm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"helm.sh/helm/v4/pkg/kube"
	release "helm.sh/helm/v4/pkg/release/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// Release is what rudder needs of one stored revision of a Helm release.
type Release struct {
	Name         string
	Namespace    string
	Revision     int
	Status       string // Helm's status: deployed, failed, superseded, pending-upgrade, …
	Chart        string
	ChartVersion string
	AppVersion   string
	Description  string
	Updated      time.Time
	Labels       map[string]string
	Manifest     string
	// Signed says rudder wrote the revision (LabelSignature): its manifest is
	// one rudder rendered, and may be applied again.
	Signed bool
	// Applied is, for a revision an Install or Upgrade just wrote, the
	// metadata of each object as the API server answered its server-side
	// apply: the state a drift comparison would compare with the revision
	// and find equal. Empty for a revision read from storage.
	Applied []metav1.PartialObjectMetadata
}

func fromHelm(r *release.Release) *Release {
	if r == nil {
		return nil
	}
	out := &Release{Name: r.Name, Namespace: r.Namespace, Revision: r.Version, Labels: r.Labels, Manifest: r.Manifest}
	if r.Info != nil {
		out.Status = r.Info.Status.String()
		out.Description = r.Info.Description
		out.Updated = r.Info.LastDeployed
	}
	if r.Chart != nil && r.Chart.Metadata != nil {
		out.Chart = r.Chart.Metadata.Name
		out.ChartVersion = r.Chart.Metadata.Version
		out.AppVersion = r.Chart.Metadata.AppVersion
	}
	return out
}

// Objects parses the release manifest into its objects, in manifest order.
func (r *Release) Objects() ([]*unstructured.Unstructured, error) {
	return ParseManifest(r.Manifest)
}

// ParseManifest parses a multi-document YAML manifest into objects, skipping
// empty documents. Numbers decode as the API server's objects do (int64 where
// integral), so parsed and live objects compare equal.
func ParseManifest(manifest string) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewBufferString(manifest), 4096)
	var objs []*unstructured.Unstructured
	for {
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("parsing manifest: %w", err)
		}
		if len(raw) == 0 || string(raw) == "null" || string(raw) == "{}" {
			continue
		}
		obj := &unstructured.Unstructured{}
		if err := obj.UnmarshalJSON(raw); err != nil {
			return nil, fmt.Errorf("parsing manifest: %w", err)
		}
		objs = append(objs, obj)
	}
}

// Kept reports whether Helm's uninstall leaves behind the object whose
// annotations these are (helm.sh/resource-policy: keep), read as Helm reads
// the annotation.
func Kept(annotations map[string]string) bool {
	v, ok := annotations[kube.ResourcePolicyAnno]
	return ok && strings.ToLower(strings.TrimSpace(v)) == kube.KeepPolicy
}
