package watches_test

import (
	"fmt"
	"testing/fstest"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/rudder-operator/rudder/internal/watches"
)

func ExampleLoad() {
	fsys := fstest.MapFS{
		"watches.yaml": {Data: []byte(`
- group: webapp.my.domain
  version: v1
  kind: WebApp
  chart: charts/webapp
  hooks: [dns]
`)},
		"charts/webapp/Chart.yaml":               {Data: []byte("apiVersion: v2\nname: webapp\nversion: 0.1.0\n")},
		"charts/webapp/templates/configmap.yaml": {Data: []byte("apiVersion: v1\nkind: ConfigMap\n")},
	}
	ws, err := watches.Load(fsys, "watches.yaml")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, w := range ws {
		fmt.Println(w.GVK, w.ChartDir, w.Hooks, w.MaxHistory, w.MaxConcurrentReconciles, w.WatchDependentResources)
	}
	// Output:
	// webapp.my.domain/v1, Kind=WebApp charts/webapp [dns] 10 1 true
}

func ExampleWatch_ReleaseName() {
	w := watches.Watch{GVK: schema.GroupVersionKind{Group: "webapp.my.domain", Version: "v1", Kind: "WebApp"}}
	fmt.Println(w.ReleaseName("shop"))
	fmt.Println(w.ReleaseName("a-custom-resource-with-a-name-far-too-long-for-a-helm-release"))
	// Output:
	// webapp-shop
	// webapp-a-custom-resource-with-a-name-far-too-f8bc4811
}
