package helm

import (
	"context"
	"fmt"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage/driver"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/rudder-operator/rudder/internal/testenv"
)

// A storage write carries the resourceVersion the driver read the revision
// at, however it read it: a revision the helm CLI (Helm's own driver) wrote
// in between is not overwritten, and the write fails with the API server's
// Conflict. Against a real API server, which is what enforces it.
func TestSecretsDriver_Update(t *testing.T) {
	cfg := testenv.StartFor(t)
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	const key = "sh.helm.release.v1.webapp-front.v1"
	revision := func(status release.Status, description string) *release.Release {
		return &release.Release{Name: "webapp-front", Version: 1,
			Info:  &release.Info{Status: status, Description: description},
			Chart: &chart.Chart{Metadata: &chart.Metadata{Name: "webapp", Version: "0.1.0"}}}
	}
	installedByHelm := func(_ secretsDriver, helms *driver.Secrets) error {
		return helms.Create(key, revision(release.StatusDeployed, "Install complete"))
	}
	tests := []struct {
		name string
		// read stores revision 1 and has ours read it (or write it).
		read     func(ours secretsDriver, helms *driver.Secrets) error
		cliWrite bool // the helm CLI writes revision 1 after ours read it
	}{
		{name: "read by Get, unchanged", read: func(ours secretsDriver, helms *driver.Secrets) error {
			if err := installedByHelm(ours, helms); err != nil {
				return err
			}
			_, err := ours.Get(key)
			return err
		}},
		{name: "read by Get, then written by the helm CLI", cliWrite: true, read: func(ours secretsDriver, helms *driver.Secrets) error {
			if err := installedByHelm(ours, helms); err != nil {
				return err
			}
			_, err := ours.Get(key)
			return err
		}},
		{name: "read by Query, then written by the helm CLI", cliWrite: true, read: func(ours secretsDriver, helms *driver.Secrets) error {
			if err := installedByHelm(ours, helms); err != nil {
				return err
			}
			_, err := ours.Query(map[string]string{"name": "webapp-front", "owner": "helm", "status": "deployed"})
			return err
		}},
		{name: "read by List, then written by the helm CLI", cliWrite: true, read: func(ours secretsDriver, helms *driver.Secrets) error {
			if err := installedByHelm(ours, helms); err != nil {
				return err
			}
			_, err := ours.List(func(*release.Release) bool { return true })
			return err
		}},
		{name: "read by QueryLean, then written by the helm CLI", cliWrite: true, read: func(ours secretsDriver, helms *driver.Secrets) error {
			if err := installedByHelm(ours, helms); err != nil {
				return err
			}
			_, err := ours.QueryLean(map[string]string{"name": "webapp-front", "owner": "helm"})
			return err
		}},
		{name: "created by the driver, then written by the helm CLI", cliWrite: true, read: func(ours secretsDriver, _ *driver.Secrets) error {
			return ours.Create(key, revision(release.StatusPendingInstall, "Initial install underway"))
		}},
		{name: "updated by the driver, unchanged", read: func(ours secretsDriver, _ *driver.Secrets) error {
			if err := ours.Create(key, revision(release.StatusPendingInstall, "Initial install underway")); err != nil {
				return err
			}
			return ours.Update(key, revision(release.StatusDeployed, "Install complete"))
		}},
		{name: "updated by the driver, then written by the helm CLI", cliWrite: true, read: func(ours secretsDriver, _ *driver.Secrets) error {
			if err := ours.Create(key, revision(release.StatusPendingInstall, "Initial install underway")); err != nil {
				return err
			}
			return ours.Update(key, revision(release.StatusDeployed, "Install complete"))
		}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			ns := fmt.Sprintf("update-%d", i)
			if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			secrets := cs.CoreV1().Secrets(ns)
			ours, helms := newSecretsDriver(secrets), driver.NewSecrets(secrets)
			if err := tt.read(ours, helms); err != nil {
				t.Fatal(err)
			}
			want := "Upgrade complete" // what rudder's write says
			if tt.cliWrite {
				want = "Rollback to 1"
				if err := helms.Update(key, revision(release.StatusSuperseded, want)); err != nil {
					t.Fatal(err)
				}
			}
			err := ours.Update(key, revision(release.StatusSuperseded, "Upgrade complete"))
			switch {
			case tt.cliWrite && !apierrors.IsConflict(err):
				t.Errorf("update after the helm CLI wrote: %v, want a Conflict", err)
			case !tt.cliWrite && err != nil:
				t.Errorf("update: %v", err)
			}
			got, err := helms.Get(key)
			if err != nil {
				t.Fatal(err)
			}
			if got.Info.Description != want {
				t.Errorf("stored revision says %q, want %q", got.Info.Description, want)
			}
		})
	}
}
