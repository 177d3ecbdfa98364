package helm

import (
	"context"
	"fmt"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A lean history query decodes the newest revision and the deployed ones;
// every other revision is an outline of its number and status. A newest
// revision that does not decode is left out, as Helm leaves it out, and the
// next one is decoded instead.
func TestSecretsDriver_QueryLean_DecodesTheNewestAndTheDeployed(t *testing.T) {
	tests := []struct {
		name     string
		statuses []release.Status // of revisions 1, 2, ...
		corrupt  int              // a revision whose data does not decode, or 0
		whole    []int            // the revisions decoded, newest first
		outlined []int
	}{
		{name: "newest deployed", statuses: statuses("superseded", "superseded", "superseded", "deployed"), whole: []int{4}, outlined: []int{3, 2, 1}},
		{name: "newest failed", statuses: statuses("superseded", "deployed", "failed", "failed"), whole: []int{4, 2}, outlined: []int{3, 1}},
		{name: "newest pending", statuses: statuses("superseded", "deployed", "pending-upgrade"), whole: []int{3, 2}, outlined: []int{1}},
		{name: "newest corrupt", statuses: statuses("superseded", "superseded", "deployed", "failed"), corrupt: 4, whole: []int{3}, outlined: []int{2, 1}},
		{name: "none deployed", statuses: statuses("superseded", "failed"), whole: []int{2}, outlined: []int{1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ns := newStorageNamespace(t)
			secrets, d := ns.secrets, ns.driver()
			for i, status := range tt.statuses {
				rel := storedRelease(i+1, status)
				if err := d.Create(fmt.Sprintf("sh.helm.release.v1.app.v%d", rel.Version), rel); err != nil {
					t.Fatal(err)
				}
			}
			if tt.corrupt > 0 {
				key := fmt.Sprintf("sh.helm.release.v1.app.v%d", tt.corrupt)
				s, err := secrets.Get(context.Background(), key, metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				s.Data["release"] = []byte("not base64!")
				if _, err := secrets.Update(context.Background(), s, metav1.UpdateOptions{}); err != nil {
					t.Fatal(err)
				}
			}

			rels, err := d.QueryLean(map[string]string{"name": "app", "owner": "helm"})
			if err != nil {
				t.Fatal(err)
			}
			var whole, outlined []int
			for _, r := range rels {
				if r.Info == nil || r.Info.Status != tt.statuses[r.Version-1] || r.Name != "app" || r.Labels["owner"] != "helm" {
					t.Errorf("revision %d: %+v, want its name, status %s and labels", r.Version, r, tt.statuses[r.Version-1])
				}
				switch {
				case r.Chart != nil && r.Manifest == manifestOf(r.Version) && r.Config["n"] == float64(r.Version):
					whole = append(whole, r.Version)
				case r.Chart == nil && r.Manifest == "" && r.Config == nil:
					outlined = append(outlined, r.Version)
				default:
					t.Errorf("revision %d is neither whole nor an outline: %+v", r.Version, r)
				}
			}
			if fmt.Sprint(whole) != fmt.Sprint(tt.whole) || fmt.Sprint(outlined) != fmt.Sprint(tt.outlined) {
				t.Errorf("decoded %v and outlined %v, want %v and %v", whole, outlined, tt.whole, tt.outlined)
			}
		})
	}
}

// Helm's Last and Deployed find whole revisions through a lean history, and
// its pruning deletes the oldest revisions by their outlines and keeps the
// deployed one, as over a whole history.
func TestLeanHistory_ServesHelmsStorage(t *testing.T) {
	ns := newStorageNamespace(t)
	secrets := ns.secrets
	memo := &historyMemo{Driver: ns.driver()}
	s := storage.Init(leanHistory{memo})
	s.MaxHistory = 3
	for i, status := range statuses("superseded", "deployed", "failed") {
		if err := s.Create(storedRelease(i+1, status)); err != nil {
			t.Fatal(err)
		}
	}
	last, err := s.Last("app")
	if err != nil || last.Version != 3 || last.Manifest != manifestOf(3) {
		t.Fatalf("Last: %+v, %v; want revision 3 whole", last, err)
	}
	deployed, err := s.Deployed("app")
	if err != nil || deployed.Version != 2 || deployed.Manifest != manifestOf(2) {
		t.Fatalf("Deployed: %+v, %v; want revision 2 whole", deployed, err)
	}
	// What is not Helm's upgrade or uninstall reads the history whole, past
	// the lean answer the memo holds.
	h, err := memo.Query(map[string]string{"name": "app", "owner": "helm"})
	if err != nil || len(h) != 3 {
		t.Fatalf("the whole history: %v, %v", h, err)
	}
	for _, r := range h {
		if r.Manifest != manifestOf(r.Version) {
			t.Errorf("revision %d of the whole history is not whole: %+v", r.Version, r)
		}
	}
	// Storing revision 4 makes room by deleting revision 1, never revision
	// 2, the deployed one.
	if err := s.Create(storedRelease(4, release.StatusFailed)); err != nil {
		t.Fatal(err)
	}
	list, err := secrets.List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	for _, item := range list.Items {
		kept = append(kept, item.Labels["version"]+":"+item.Labels["status"])
	}
	if fmt.Sprint(kept) != "[2:deployed 3:failed 4:failed]" {
		t.Errorf("stored after pruning: %v, want [2:deployed 3:failed 4:failed]", kept)
	}
}

func statuses(s ...string) []release.Status {
	out := make([]release.Status, len(s))
	for i, v := range s {
		out[i] = release.Status(v)
	}
	return out
}

func manifestOf(version int) string { return fmt.Sprintf("---\n# revision %d\n", version) }

// storedRelease is revision version of release "app", as Helm stores it.
func storedRelease(version int, status release.Status) *release.Release {
	return &release.Release{
		Name: "app", Namespace: "shop", Version: version,
		Info:     &release.Info{Status: status},
		Chart:    &chart.Chart{Metadata: &chart.Metadata{Name: "webapp", Version: "0.1.0"}},
		Config:   map[string]any{"n": float64(version)},
		Manifest: manifestOf(version),
	}
}
