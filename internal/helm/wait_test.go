package helm

import (
	"context"
	"io"
	"slices"
	"testing"
	"testing/fstest"

	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/chart/common"
	"helm.sh/helm/v4/pkg/kube"
	kubefake "helm.sh/helm/v4/pkg/kube/fake"
	"helm.sh/helm/v4/pkg/storage"
	"k8s.io/client-go/kubernetes/fake"
)

// waitRecorder is Helm's printing fake kube client that records the wait
// strategy of every waiter an action asks for.
type waitRecorder struct {
	kube.Interface
	strategies []kube.WaitStrategy
}

func (w *waitRecorder) GetWaiter(ws kube.WaitStrategy) (kube.Waiter, error) {
	w.strategies = append(w.strategies, ws)
	return w.Interface.GetWaiter(ws)
}

// Every action sets its wait strategy, uninstall included: Helm 4 refuses
// to run one that does not ("wait strategy not set"), and rudder waits for
// hooks only.
func TestClient_EveryActionSetsAWaitStrategy(t *testing.T) {
	chrt, err := LoadChart(fstest.MapFS{
		"c/Chart.yaml":          {Data: []byte("apiVersion: v2\nname: c\nversion: 0.1.0\n")},
		"c/templates/cm.yaml":   {Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {v: {{ .Values.v | quote }}}\n")},
		"c/templates/test.yaml": {Data: []byte("apiVersion: v1\nkind: Pod\nmetadata: {name: t, annotations: {helm.sh/hook: test}}\nspec: {containers: [{name: t, image: busybox}]}\n")},
	}, "c")
	if err != nil {
		t.Fatal(err)
	}
	secrets := fake.NewClientset().CoreV1().Secrets("shop")
	rec := &waitRecorder{Interface: &kubefake.PrintingKubeClient{Out: io.Discard}}
	trust := newTrusted(newSecretsDriver(secrets), nil, "", nil)
	cfg := action.NewConfiguration()
	cfg.KubeClient = rec
	cfg.Releases = storage.Init(trust)
	cfg.Capabilities = common.DefaultCapabilities.Copy()
	c := &Client{cfg: cfg, namespace: "shop", trust: trust, secrets: secrets}

	ctx := context.Background()
	steps := []struct {
		action string
		run    func() error
	}{
		{"install", func() error {
			_, err := c.Install(ctx, Spec{Name: "app", Chart: chrt, Values: map[string]any{"v": "1"}})
			return err
		}},
		{"upgrade", func() error {
			_, err := c.Upgrade(ctx, Spec{Name: "app", Chart: chrt, Values: map[string]any{"v": "2"}})
			return err
		}},
		{"rollback", func() error {
			_, err := c.Rollback(ctx, "app", RollbackOptions{To: 1})
			return err
		}},
		{"test", func() error {
			_, err := c.Test("app", 0)
			return err
		}},
		{"uninstall", func() error { return c.Uninstall("app", nil, func(string) {}) }},
	}
	for _, s := range steps {
		rec.strategies = nil
		if err := s.run(); err != nil {
			t.Fatalf("%s: %v", s.action, err)
		}
		if len(rec.strategies) == 0 || slices.Contains(rec.strategies, "") {
			t.Errorf("%s asked for waiters %q, want at least one, each with a strategy", s.action, rec.strategies)
		}
		if s.action != "test" && slices.ContainsFunc(rec.strategies, func(ws kube.WaitStrategy) bool { return ws != kube.HookOnlyStrategy }) {
			t.Errorf("%s waits with %q, want hooks only", s.action, rec.strategies)
		}
	}
}
