package kinds_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/jsonpath"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/rudder-operator/rudder/test/testenv"
)

// TestNetwork_StatusReportsConfiguration checks that a Network's status
// reports the configuration its chart publishes (the ConfigMap annotated
// rudder.dev/status-key: network), as users read it with
// kubectl get network NAME -o jsonpath='{.status.network.cidr}'.
func TestNetwork_StatusReportsConfiguration(t *testing.T) {
	requireStatusField(t, filepath.Join(root, "config", "crd", "bases", "samplecrd.k8s.io_networks.yaml"), "network", "published")
	ns := namespace(t)
	cr := networkRef(ns, "lab")
	cr.Object["spec"] = map[string]any{"cidr": "10.1.0.0/24", "gateway": "10.1.0.1"}
	if err := k8s.Create(ctx, cr); err != nil {
		t.Fatalf("create: %v", err)
	}
	testenv.Eventually(t, "status.network after install", func() error {
		return networkStatusIs(ns, "lab", map[string]string{
			"{.status.network.cidr}": "10.1.0.0/24", "{.status.network.gateway}": "10.1.0.1",
			"{.status.network.ipFamily}": "IPv4", "{.status.network.prefixLength}": "24",
			"{.status.network.netmask}": "255.255.255.0", "{.status.published}": `["network"]`,
			"{.status.phase}": "Running",
		})
	})

	// IPv6 has no netmask: the key must leave status, not linger from IPv4.
	patch := client.RawPatch(types.MergePatchType, []byte(`{"spec":{"cidr":"fd00::/64","gateway":"fd00::1"}}`))
	if err := k8s.Patch(ctx, networkRef(ns, "lab"), patch); err != nil {
		t.Fatalf("modify: %v", err)
	}
	testenv.Eventually(t, "status.network after modify", func() error {
		if err := networkStatusIs(ns, "lab", map[string]string{
			"{.status.network.cidr}": "fd00::/64", "{.status.network.gateway}": "fd00::1",
			"{.status.network.ipFamily}": "IPv6", "{.status.network.prefixLength}": "64",
		}); err != nil {
			return err
		}
		u := networkRef(ns, "lab")
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(u), u); err != nil {
			return err
		}
		if _, found, _ := unstructured.NestedFieldNoCopy(u.Object, "status", "network", "netmask"); found {
			return fmt.Errorf("status.network still holds the IPv4 netmask: %v", u.Object["status"])
		}
		return nil
	})
}

// networkStatusIs evaluates kubectl-style JSONPath templates on a Network.
func networkStatusIs(ns, name string, want map[string]string) error {
	u := networkRef(ns, name)
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(u), u); err != nil {
		return err
	}
	for tmpl, v := range want {
		jp := jsonpath.New(tmpl)
		if err := jp.Parse(tmpl); err != nil {
			return err
		}
		var out bytes.Buffer
		if err := jp.Execute(&out, u.Object); err != nil {
			return fmt.Errorf("%s: %w (status: %v)", tmpl, err, u.Object["status"])
		}
		if out.String() != v {
			return fmt.Errorf("%s = %q, want %q", tmpl, out.String(), v)
		}
	}
	return nil
}

// requireStatusField fails at once, saying what to do, when the CRD in file
// does not declare the status fields rudder writes; the API server would
// prune them and the test would only time out.
func requireStatusField(t *testing.T, file string, fields ...string) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var crd struct {
		Spec struct {
			Versions []struct {
				Schema struct {
					OpenAPIV3Schema struct {
						Properties map[string]struct {
							Properties            map[string]any `json:"properties"`
							PreserveUnknownFields *bool          `json:"x-kubernetes-preserve-unknown-fields"`
						} `json:"properties"`
					} `json:"openAPIV3Schema"`
				} `json:"schema"`
			} `json:"versions"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(data, &crd); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	var missing []string
	for _, v := range crd.Spec.Versions {
		status := v.Schema.OpenAPIV3Schema.Properties["status"]
		if status.PreserveUnknownFields != nil && *status.PreserveUnknownFields {
			continue
		}
		for _, f := range fields {
			if _, ok := status.Properties[f]; !ok {
				missing = append(missing, "status."+f)
			}
		}
	}
	if len(missing) > 0 {
		t.Fatalf("%s does not declare %s, so the API server drops them: declare the chart's published status key "+
			"(Chart.yaml annotation rudder.dev/status-schema) and regenerate the CRDs with make manifests",
			file, strings.Join(missing, ", "))
	}
}
