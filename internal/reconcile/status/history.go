package status

import (
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/rudder-operator/rudder/internal/helm"
	"github.com/rudder-operator/rudder/internal/stored"
)

// EntryOf is the status.history entry of rel.
func EntryOf(rel *helm.Release) HistoryEntry {
	e := HistoryEntry{Revision: rel.Revision, Status: rel.Status, Chart: rel.Chart, ChartVersion: rel.ChartVersion,
		AppVersion: rel.AppVersion, ValuesDigest: rel.Labels[stored.LabelValuesDigest], Description: rel.Description}
	if !rel.Updated.IsZero() {
		t := metav1.NewTime(rel.Updated)
		e.Updated = &t
	}
	return e
}

// ShownHistory returns the entries of the custom resource's status.history
// by revision number.
func ShownHistory(obj *unstructured.Unstructured) map[int]HistoryEntry {
	items, found, _ := unstructured.NestedSlice(obj.Object, "status", "history")
	if !found {
		return nil
	}
	out := make(map[int]HistoryEntry, len(items))
	for _, item := range items {
		m, ok := item.(map[string]any)
		if !ok {
			continue
		}
		var e HistoryEntry
		if runtime.DefaultUnstructuredConverter.FromUnstructured(m, &e) == nil && e.Revision > 0 {
			out[e.Revision] = e
		}
	}
	return out
}

// RecordedFor reports whether e, an entry status.history shows, was made from
// the stored revision rev rather than from an earlier revision of the same
// number (one uninstalled since): same number and values digest, and Helm
// deployed e within a minute after rudder started writing rev. After a
// restart such entries spare decoding every stored revision again; revisions
// without the label (another client's, or rudder's rollbacks, which carry the
// label of the revision they copy) are decoded.
func RecordedFor(e HistoryEntry, rev stored.Revision) bool {
	written, err := strconv.ParseInt(rev.Labels[stored.LabelWrittenAt], 10, 64)
	if err != nil || e.Updated == nil || e.Revision != rev.Number || e.ValuesDigest != rev.Labels[stored.LabelValuesDigest] {
		return false
	}
	lag := e.Updated.Unix() - written
	return lag >= 0 && lag <= 60
}
