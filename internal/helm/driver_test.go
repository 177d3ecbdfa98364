package helm

import (
	"errors"
	"reflect"
	"testing"

	rcommon "helm.sh/helm/v4/pkg/release/common"
	release "helm.sh/helm/v4/pkg/release/v1"
	"helm.sh/helm/v4/pkg/storage/driver"
)

// Helm's uninstall marks the newest revision uninstalling; the labels go into
// that write, and into no other.
func TestMarkingUninstall_LabelsTheUninstallingWriteOnly(t *testing.T) {
	mem := driver.NewMemory()
	d := markingUninstall{Driver: mem, labels: map[string]string{"mark": "1"}}
	for _, status := range []rcommon.Status{rcommon.StatusDeployed, rcommon.StatusUninstalling} {
		rel := &release.Release{Name: "app", Version: 1, Info: &release.Info{Status: status}, Labels: map[string]string{"kept": "yes"}}
		if err := mem.Create("sh.helm.release.v1.app.v1", &release.Release{Name: "app", Version: 1, Info: &release.Info{Status: rcommon.StatusFailed}}); err != nil && !errors.Is(err, driver.ErrReleaseExists) {
			t.Fatal(err)
		}
		if err := d.Update("sh.helm.release.v1.app.v1", rel); err != nil {
			t.Fatal(err)
		}
		want := map[string]string{"kept": "yes"}
		if status == rcommon.StatusUninstalling {
			want["mark"] = "1"
		}
		if !reflect.DeepEqual(rel.Labels, want) {
			t.Errorf("%s: labels %v, want %v", status, rel.Labels, want)
		}
	}
}
