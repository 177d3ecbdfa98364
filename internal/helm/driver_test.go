package helm

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage"
	"helm.sh/helm/v3/pkg/storage/driver"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// rudder's driver writes what Helm's own driver (and so the helm CLI) reads,
// labels included; the fake clientset stands in for a Secret store only.
func TestSecretsDriver_WritesHelmsFormat(t *testing.T) {
	secrets := fake.NewClientset().CoreV1().Secrets("shop")
	ours, helms := newSecretsDriver(secrets), driver.NewSecrets(secrets)
	rel := &release.Release{
		Name: "webapp-front", Namespace: "shop", Version: 2,
		Info:     &release.Info{Status: release.StatusPendingUpgrade, Description: "Preparing upgrade"},
		Chart:    &chart.Chart{Metadata: &chart.Metadata{Name: "webapp", Version: "0.1.0"}},
		Config:   map[string]any{"replicas": float64(3)},
		Manifest: "---\nkind: Service\n",
		Labels:   map[string]string{"rudder.dev/revision": "2"},
	}
	const key = "sh.helm.release.v1.webapp-front.v2"

	tests := []struct {
		name   string
		write  func() error
		status release.Status
		stamp  string
	}{
		{name: "create", write: func() error { return ours.Create(key, rel) }, status: release.StatusPendingUpgrade, stamp: "createdAt"},
		{name: "update", write: func() error {
			rel.Info.Status = release.StatusDeployed
			return ours.Update(key, rel)
		}, status: release.StatusDeployed, stamp: "modifiedAt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.write(); err != nil {
				t.Fatal(err)
			}
			got, err := helms.Get(key)
			if err != nil {
				t.Fatalf("Helm's driver cannot read it: %v", err)
			}
			if got.Info.Status != tt.status || got.Manifest != rel.Manifest || !reflect.DeepEqual(got.Config, rel.Config) ||
				got.Chart.Metadata.Name != "webapp" || got.Labels["rudder.dev/revision"] != "2" {
				t.Errorf("Helm read %+v, want %+v", got, rel)
			}
			s, err := secrets.Get(context.Background(), key, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]string{"name": "webapp-front", "owner": "helm", "status": string(tt.status), "version": "2", "rudder.dev/revision": "2"}
			for k, v := range want {
				if s.Labels[k] != v {
					t.Errorf("label %s = %q, want %q", k, s.Labels[k], v)
				}
			}
			if s.Labels[tt.stamp] == "" || s.Type != "helm.sh/release.v1" {
				t.Errorf("labels %v type %q: want %s and helm.sh/release.v1", s.Labels, s.Type, tt.stamp)
			}
		})
	}
	if err := ours.Create(key, rel); !errors.Is(err, driver.ErrReleaseExists) {
		t.Errorf("creating a stored revision again: %v, want driver.ErrReleaseExists", err)
	}
}

// Deleting a revision already gone succeeds: a namespace being deleted takes
// the storage Secrets along while an uninstall purges them, and Helm joins
// a purge's error into a string no caller can tell from a real failure.
func TestSecretsDriver_DeleteOfARevisionAlreadyGone(t *testing.T) {
	secrets := fake.NewClientset().CoreV1().Secrets("shop")
	ours := newSecretsDriver(secrets)
	st := storage.Init(ours)
	for v := 1; v <= 2; v++ {
		rel := &release.Release{Name: "webapp-gone", Namespace: "shop", Version: v,
			Info: &release.Info{Status: release.StatusSuperseded}, Chart: &chart.Chart{Metadata: &chart.Metadata{Name: "webapp"}}}
		if err := st.Create(rel); err != nil {
			t.Fatal(err)
		}
	}
	// The namespace controller got to revision 1 first.
	if err := secrets.Delete(context.Background(), "sh.helm.release.v1.webapp-gone.v1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	for v := 1; v <= 2; v++ {
		if _, err := st.Delete("webapp-gone", v); err != nil {
			t.Errorf("deleting revision %d: %v", v, err)
		}
	}
	if list, _ := secrets.List(context.Background(), metav1.ListOptions{}); len(list.Items) != 0 {
		t.Errorf("%d storage Secrets left, want none", len(list.Items))
	}
	if _, err := st.Delete("webapp-gone", 3); err != nil {
		t.Errorf("deleting a revision that never was: %v", err)
	}
}

// A release is stored as two gzip members, the chart's compressed once and
// kept; Helm's driver reads it back whole, with or without a chart.
func TestEncodeRelease_ChartMemberIsKeptAndReadByHelm(t *testing.T) {
	chrt, err := loader.Load("../../charts/webapp")
	if err != nil {
		t.Fatal(err)
	}
	secrets := fake.NewClientset().CoreV1().Secrets("shop")
	ours, helms := newSecretsDriver(secrets), driver.NewSecrets(secrets)
	before := len(compressedCharts.byDigest)
	for v, rel := range []*release.Release{
		{Name: "a", Namespace: "shop", Version: 1, Chart: chrt, Info: &release.Info{Status: release.StatusDeployed}, Manifest: "---\nkind: Service\n"},
		{Name: "b", Namespace: "shop", Version: 2, Chart: chrt, Info: &release.Info{Status: release.StatusPendingInstall}, Config: map[string]any{"port": float64(80)}},
		{Name: "c", Namespace: "shop", Version: 3, Info: &release.Info{Status: release.StatusFailed}},
	} {
		key := fmt.Sprintf("sh.helm.release.v1.%s.v%d", rel.Name, v+1)
		if err := ours.Create(key, rel); err != nil {
			t.Fatal(err)
		}
		got, err := helms.Get(key)
		if err != nil {
			t.Fatalf("%s: Helm's driver cannot read it: %v", rel.Name, err)
		}
		if got.Name != rel.Name || got.Version != rel.Version || got.Manifest != rel.Manifest || !reflect.DeepEqual(got.Config, rel.Config) {
			t.Errorf("%s: Helm read %+v, want %+v", rel.Name, got, rel)
		}
		if (rel.Chart == nil) != (got.Chart == nil) ||
			rel.Chart != nil && (!reflect.DeepEqual(got.Chart.Metadata, rel.Chart.Metadata) || !reflect.DeepEqual(got.Chart.Templates, rel.Chart.Templates) ||
				!reflect.DeepEqual(got.Chart.Schema, rel.Chart.Schema)) {
			t.Errorf("%s: Helm read another chart than was stored", rel.Name)
		}
	}
	if n := len(compressedCharts.byDigest) - before; n != 1 {
		t.Errorf("%d chart members compressed for two releases of one chart, want 1", n)
	}
}

// BenchmarkEncodeRelease compares encoding a WebApp's release as one gzip
// member, as Helm does, with rudder's two, the chart's kept.
func BenchmarkEncodeRelease(b *testing.B) {
	chrt, err := loader.Load("../../charts/webapp")
	if err != nil {
		b.Fatal(err)
	}
	rel := &release.Release{Name: "webapp-front", Namespace: "shop", Version: 1, Chart: chrt,
		Info: &release.Info{Status: release.StatusDeployed}, Config: map[string]any{"image": "nginx:1.25", "port": float64(80)},
		Manifest: strings.Repeat("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: front\n", 40)}
	b.Run("one member", func(b *testing.B) {
		for b.Loop() {
			js, err := json.Marshal(rel)
			if err != nil {
				b.Fatal(err)
			}
			out, err := compress(js)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(base64.StdEncoding.EncodedLen(len(out))), "stored-bytes")
		}
	})
	b.Run("chart member kept", func(b *testing.B) {
		for b.Loop() {
			out, err := encodeRelease(rel)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(len(out)), "stored-bytes")
		}
	})
}

// Helm's uninstall marks the newest revision uninstalling; the labels go into
// that write, and into no other.
func TestMarkingUninstall_LabelsTheUninstallingWriteOnly(t *testing.T) {
	mem := driver.NewMemory()
	d := markingUninstall{Driver: mem, labels: map[string]string{"mark": "1"}}
	for _, status := range []release.Status{release.StatusDeployed, release.StatusUninstalling} {
		rel := &release.Release{Name: "app", Version: 1, Info: &release.Info{Status: status}, Labels: map[string]string{"kept": "yes"}}
		if err := mem.Create("sh.helm.release.v1.app.v1", &release.Release{Name: "app", Version: 1, Info: &release.Info{Status: release.StatusFailed}}); err != nil && !errors.Is(err, driver.ErrReleaseExists) {
			t.Fatal(err)
		}
		if err := d.Update("sh.helm.release.v1.app.v1", rel); err != nil {
			t.Fatal(err)
		}
		want := map[string]string{"kept": "yes"}
		if status == release.StatusUninstalling {
			want["mark"] = "1"
		}
		if !reflect.DeepEqual(rel.Labels, want) {
			t.Errorf("%s: labels %v, want %v", status, rel.Labels, want)
		}
	}
}
