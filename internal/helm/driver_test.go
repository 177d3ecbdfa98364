package helm

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
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
