package leader

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestChoose(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	pod := func(name string, eligible, labeled bool, age int) Candidate {
		return Candidate{Name: name, Eligible: eligible, Labeled: labeled, Created: t0.Add(-time.Duration(age) * time.Minute)}
	}
	for _, tc := range []struct {
		name   string
		holder string
		pods   []Candidate
		want   Decision
	}{
		{name: "no pods", want: Decision{}},
		{name: "none eligible: no leader, labels off", holder: "a",
			pods: []Candidate{pod("a", false, true, 3), pod("b", false, false, 2)},
			want: Decision{Unlabel: []string{"a"}}},
		{name: "first election: the oldest eligible",
			pods: []Candidate{pod("young", true, false, 1), pod("old", true, false, 5), pod("older-not-ready", false, false, 9)},
			want: Decision{Leader: "old"}},
		{name: "same age: by name",
			pods: []Candidate{pod("b", true, false, 1), pod("a", true, false, 1)},
			want: Decision{Leader: "a"}},
		{name: "the holder keeps leading though older pods are there", holder: "young",
			pods: []Candidate{pod("young", true, true, 1), pod("old", true, false, 5)},
			want: Decision{Leader: "young"}},
		{name: "the holder keeps leading before its label is on (restart between Lease and label)", holder: "young",
			pods: []Candidate{pod("young", true, false, 1), pod("old", true, false, 5)},
			want: Decision{Leader: "young"}},
		{name: "holder not Ready: the label moves to the oldest eligible, off the holder first", holder: "a",
			pods: []Candidate{pod("a", false, true, 9), pod("b", true, false, 1), pod("c", true, false, 2)},
			want: Decision{Leader: "c", Unlabel: []string{"a"}}},
		{name: "holder gone: a labeled eligible pod is kept (Lease lost)", holder: "gone",
			pods: []Candidate{pod("b", true, true, 1), pod("c", true, false, 2)},
			want: Decision{Leader: "b"}},
		{name: "two labeled: the holder keeps it, the other loses it", holder: "b",
			pods: []Candidate{pod("a", true, true, 5), pod("b", true, true, 1)},
			want: Decision{Leader: "b", Unlabel: []string{"a"}}},
		{name: "no Lease, two labeled: the oldest keeps it",
			pods: []Candidate{pod("a", true, true, 1), pod("b", true, true, 5)},
			want: Decision{Leader: "b", Unlabel: []string{"a"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Choose(tc.holder, tc.pods)
			if got.Leader != tc.want.Leader || !slices.Equal(got.Unlabel, tc.want.Unlabel) {
				t.Errorf("Choose(%q) = %+v, want %+v", tc.holder, got, tc.want)
			}
		})
	}
}

func TestSpecOf(t *testing.T) {
	for _, tc := range []struct {
		name    string
		values  map[string]any
		want    time.Duration
		wantErr string
	}{
		{name: "default duration", values: map[string]any{"selector": map[string]any{"matchLabels": map[string]any{"app": "a"}}},
			want: DefaultLeaseDuration},
		{name: "duration", values: map[string]any{"selector": map[string]any{"matchLabels": map[string]any{"app": "a"}}, "leaseDuration": "4s"},
			want: 4 * time.Second},
		{name: "expressions", values: map[string]any{"selector": map[string]any{"matchExpressions": []any{
			map[string]any{"key": "app", "operator": "Exists"}}}}, want: DefaultLeaseDuration},
		{name: "no selector", values: map[string]any{}, wantErr: "spec.selector: is missing"},
		{name: "empty selector", values: map[string]any{"selector": map[string]any{}}, wantErr: "spec.selector: is empty"},
		{name: "bad operator", values: map[string]any{"selector": map[string]any{"matchExpressions": []any{
			map[string]any{"key": "app", "operator": "Near"}}}}, wantErr: "spec.selector:"},
		{name: "zero duration", values: map[string]any{"selector": map[string]any{"matchLabels": map[string]any{"app": "a"}}, "leaseDuration": "0s"},
			wantErr: "spec.leaseDuration:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := specOf(tc.values)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("specOf: error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.leaseDuration != tc.want {
				t.Errorf("leaseDuration %s, want %s", s.leaseDuration, tc.want)
			}
		})
	}
}
