package status

import (
	"strconv"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/rudder-operator/rudder/internal/stored"
)

func TestRecordedFor(t *testing.T) {
	deployed := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	entry := HistoryEntry{Revision: 3, Updated: &metav1.Time{Time: deployed}, Status: "deployed", ValuesDigest: "sha256:aa"}
	rev := func(number int, digest string, written time.Time) stored.Revision {
		return stored.Revision{Number: number, Status: "superseded", Labels: map[string]string{
			stored.LabelValuesDigest: digest, stored.LabelWrittenAt: strconv.FormatInt(written.Unix(), 10)}}
	}
	tests := []struct {
		name string
		rev  stored.Revision
		want bool
	}{
		{name: "written just before it was deployed", rev: rev(3, "sha256:aa", deployed.Add(-2*time.Second)), want: true},
		{name: "written in the same second", rev: rev(3, "sha256:aa", deployed), want: true},
		{name: "another number", rev: rev(4, "sha256:aa", deployed), want: false},
		{name: "other values", rev: rev(3, "sha256:bb", deployed), want: false},
		{name: "the same number written again later (reinstalled)", rev: rev(3, "sha256:aa", deployed.Add(time.Hour)), want: false},
		{name: "a copied label, written long before (rollback)", rev: rev(3, "sha256:aa", deployed.Add(-time.Hour)), want: false},
		{name: "no label (another Helm client)", rev: stored.Revision{Number: 3, Labels: map[string]string{stored.LabelValuesDigest: "sha256:aa"}}, want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := RecordedFor(entry, tt.rev); got != tt.want {
				t.Errorf("recordedFor = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestShownHistory(t *testing.T) {
	obj := &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{"history": []any{
		map[string]any{"revision": int64(2), "status": "deployed", "updated": "2026-11-30T12:00:00Z", "valuesDigest": "sha256:aa"},
		map[string]any{"revision": int64(1), "status": "superseded", "chart": "webapp"},
		"not an entry",
	}}}}
	got := ShownHistory(obj)
	if len(got) != 2 || got[2].ValuesDigest != "sha256:aa" || got[2].Updated == nil || got[1].Chart != "webapp" {
		t.Errorf("shownHistory = %+v, want revisions 1 and 2 as written", got)
	}
	if ShownHistory(&unstructured.Unstructured{Object: map[string]any{}}) != nil {
		t.Error("a resource with no status.history shows entries")
	}
}
