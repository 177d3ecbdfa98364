package helm

import (
	"errors"
	"testing"

	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage"
	"helm.sh/helm/v3/pkg/storage/driver"
)

// countingDriver counts the queries that reach Helm's memory driver.
type countingDriver struct {
	*driver.Memory
	queries int
}

func (c *countingDriver) Query(labels map[string]string) ([]*release.Release, error) {
	c.queries++
	return c.Memory.Query(labels)
}

func TestHistoryMemo_AnswersUntilItWrites(t *testing.T) {
	under := &countingDriver{Memory: driver.NewMemory()}
	s := storage.Init(&historyMemo{Driver: under})
	store := func(version int, status release.Status) {
		t.Helper()
		rel := &release.Release{Name: "app", Version: version, Info: &release.Info{Status: status}}
		if err := s.Create(rel); err != nil {
			t.Fatal(err)
		}
	}
	store(1, release.StatusSuperseded)
	store(2, release.StatusDeployed)

	last, err := s.Last("app")
	if err != nil || last.Version != 2 {
		t.Fatalf("Last: %v, %v", last, err)
	}
	deployed, err := s.Deployed("app")
	if err != nil || deployed.Version != 2 {
		t.Fatalf("Deployed: %v, %v", deployed, err)
	}
	if h, err := s.History("app"); err != nil || len(h) != 2 {
		t.Fatalf("History: %v, %v", h, err)
	}
	if under.queries != 1 {
		t.Errorf("%d queries reached the driver for one history read, want 1", under.queries)
	}
	if _, err := s.DeployedAll("other"); err == nil {
		t.Error("the deployed revisions of a release never stored were found")
	}
	if _, err := s.Deployed("app"); err != nil {
		t.Errorf("Deployed after another release's query: %v", err)
	}

	// A write: the next read asks the driver again and sees it.
	store(3, release.StatusFailed)
	last, err = s.Last("app")
	if err != nil || last.Version != 3 {
		t.Fatalf("Last after a write: %v, %v", last, err)
	}
	if under.queries != 3 { // "other", then "app" again
		t.Errorf("%d queries reached the driver, want 3", under.queries)
	}
	if _, err := (&historyMemo{rels: []*release.Release{last}, labels: map[string]string{"name": "app", "owner": "helm"}}).Query(
		map[string]string{"name": "app", "owner": "helm", "status": "deployed"}); !errors.Is(err, driver.ErrReleaseNotFound) {
		t.Errorf("a deployed query none of the remembered revisions matches: %v, want ErrReleaseNotFound", err)
	}
}
