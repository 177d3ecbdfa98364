package reconcile

import (
	"encoding/json"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/rudder-operator/rudder/internal/helm"
)

const webAppManifest = `---
apiVersion: v1
kind: Service
metadata:
  name: my-webapp
  labels: {app: my-webapp, app.kubernetes.io/name: webapp, app.kubernetes.io/instance: webapp-my-webapp, app.kubernetes.io/version: "1.25", helm.sh/chart: webapp-0.1.0, rudder.dev/release: webapp-my-webapp}
spec:
  type: ClusterIP
  selector: {app: my-webapp}
  ports: [{name: http, port: 80, targetPort: http, protocol: TCP}]
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: my-webapp
  labels: {app: my-webapp, app.kubernetes.io/name: webapp, app.kubernetes.io/instance: webapp-my-webapp, app.kubernetes.io/version: "1.25", helm.sh/chart: webapp-0.1.0, rudder.dev/release: webapp-my-webapp}
spec:
  replicas: 3
  selector: {matchLabels: {app: my-webapp}}
  template:
    metadata:
      labels: {app: my-webapp, app.kubernetes.io/name: webapp, app.kubernetes.io/instance: webapp-my-webapp}
    spec:
      securityContext: {runAsNonRoot: true, seccompProfile: {type: RuntimeDefault}}
      containers:
      - name: webapp
        image: nginx:1.25
        ports: [{name: http, containerPort: 80, protocol: TCP}]
        readinessProbe: {httpGet: {path: /, port: http}, periodSeconds: 5}
        resources: {requests: {cpu: 50m, memory: 64Mi}, limits: {memory: 128Mi}}
        securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}
`

func TestEncodeObjects_RoundTripsDeflated(t *testing.T) {
	objs, err := helm.ParseManifest(webAppManifest)
	if err != nil {
		t.Fatal(err)
	}
	data, err := encodeObjects(objs)
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeObjects(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(objs) {
		t.Fatalf("decoded %d objects, want %d", len(got), len(objs))
	}
	for i := range objs {
		if !equality.Semantic.DeepEqual(objs[i].Object, got[i].Object) {
			t.Errorf("object %d changed:\nwant %v\ngot  %v", i, objs[i].Object, got[i].Object)
		}
	}
	js, _ := json.Marshal([]any{objs[0].Object, objs[1].Object})
	if len(data)*2 > len(js) {
		t.Errorf("kept %d bytes for %d of JSON: not deflated", len(data), len(js))
	}
	t.Logf("%d bytes of JSON kept as %d", len(js), len(data))
	// The pooled reader and writer serve the next revision as well.
	if again, err := decodeObjects(data); err != nil || len(again) != len(objs) {
		t.Fatalf("second decode: %d objects, %v", len(again), err)
	}
}

func TestDecodeObjects_RefusesWhatIsNotDeflated(t *testing.T) {
	if _, err := decodeObjects([]byte(`[{"kind":"Service"}]`)); err == nil {
		t.Fatal("decoded plain JSON as deflated")
	}
}
