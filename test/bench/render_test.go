package bench

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/rudder-operator/rudder/test/bench/webappchart"
)

func TestRenderWebApp(t *testing.T) {
	c, err := webappchart.Load()
	if err != nil {
		t.Fatal(err)
	}
	objs, err := renderWebApp(c, "ns1", webAppName(7), webAppSpec("nginx:1.25", 2))
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]*unstructured.Unstructured{}
	for _, o := range objs {
		kinds[o.GetKind()] = o
	}
	d := kinds["Deployment"]
	if d == nil || kinds["Service"] == nil || len(objs) != 2 {
		t.Fatalf("rendered %d objects %v, want a Deployment and a Service", len(objs), kinds)
	}
	containers, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
	replicas, _, _ := unstructured.NestedInt64(d.Object, "spec", "replicas")
	tests := []struct {
		name      string
		got, want any
	}{
		{"named after the WebApp", d.GetName(), "app-00007"},
		{"in its namespace", d.GetNamespace(), "ns1"},
		{"replicas", replicas, int64(2)},
		{"image", containers[0].(map[string]any)["image"], "nginx:1.25"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.got != tt.want {
				t.Errorf("got %v, want %v", tt.got, tt.want)
			}
		})
	}
}
