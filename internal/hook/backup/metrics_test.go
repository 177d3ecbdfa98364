package backup

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func TestLongestGap(t *testing.T) {
	monday := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		schedule string
		want     time.Duration
		ok       bool
	}{
		{"0 2 * * *", 24 * time.Hour, true},
		{"@hourly", time.Hour, true},
		{"*/15 * * * *", 15 * time.Minute, true},
		{"0 2 * * 1-5", 72 * time.Hour, true},     // Friday to Monday
		{"0 2 1 1 *", 366 * 24 * time.Hour, true}, // the longest of the next 64 years has a leap day
		{"", 0, false},
		{"not a schedule", 0, false},
	}
	for _, tt := range tests {
		got, ok := longestGap(tt.schedule, monday)
		if ok != tt.ok || got != tt.want {
			t.Errorf("longestGap(%q) = %s, %v; want %s, %v", tt.schedule, got, ok, tt.want, tt.ok)
		}
	}
}

// TestTally: finished Jobs are counted once each, those found at the first
// look (before a restart) not at all; the series go with the Database.
func TestTally(t *testing.T) {
	key := types.NamespacedName{Namespace: "tally", Name: "orders"}
	job := func(uid string, ok bool, at time.Time) batchv1.Job {
		typ := batchv1.JobFailed
		if ok {
			typ = batchv1.JobComplete
		}
		return batchv1.Job{ObjectMeta: metav1.ObjectMeta{UID: types.UID(uid)}, Status: batchv1.JobStatus{
			Conditions: []batchv1.JobCondition{{Type: typ, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(at)}}}}
	}
	t0 := time.Date(2026, 11, 30, 2, 0, 0, 0, time.UTC)
	var tl tally
	tl.observe(key, []batchv1.Job{job("old", true, t0)}, "0 2 * * *")
	tl.observe(key, []batchv1.Job{job("old", true, t0), job("new", true, t0.Add(24*time.Hour)), job("bad", false, t0.Add(25*time.Hour))}, "0 2 * * *")
	tl.observe(key, []batchv1.Job{job("new", true, t0.Add(24*time.Hour)), job("bad", false, t0.Add(25*time.Hour))}, "0 2 * * *")

	if got := testutil.ToFloat64(backupsFinished.WithLabelValues(key.Namespace, key.Name, "success")); got != 1 {
		t.Errorf("successes counted %v, want 1 (the Job found at the first look is not new)", got)
	}
	if got := testutil.ToFloat64(backupsFinished.WithLabelValues(key.Namespace, key.Name, "failure")); got != 1 {
		t.Errorf("failures counted %v, want 1", got)
	}
	if got := testutil.ToFloat64(lastSuccess.WithLabelValues(key.Namespace, key.Name)); got != float64(t0.Add(24*time.Hour).Unix()) {
		t.Errorf("last success %v, want the newest successful Job's time", got)
	}
	if got := testutil.ToFloat64(scheduleInterval.WithLabelValues(key.Namespace, key.Name)); got != 86400 {
		t.Errorf("schedule interval %v, want 86400", got)
	}
	// DeleteLabelValues says whether the series was there.
	tl.observe(key, nil, "") // backups disabled: no schedule to be late on
	if scheduleInterval.DeleteLabelValues(key.Namespace, key.Name) {
		t.Error("a schedule series with backups disabled")
	}
	tl.forget(key)
	if lastSuccess.DeleteLabelValues(key.Namespace, key.Name) || backupsFinished.DeleteLabelValues(key.Namespace, key.Name, "success") {
		t.Error("series left once the Database is gone")
	}
}
