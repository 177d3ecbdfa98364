package status

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Status is the part of a custom resource's .status the reconciler owns. Hooks
// own other keys; they are kept as they are.
type Status struct {
	ObservedGeneration int64          `json:"observedGeneration"`
	Phase              string         `json:"phase"`
	Message            string         `json:"message"`
	Replicas           int32          `json:"replicas"`
	ReadyReplicas      int32          `json:"readyReplicas"`
	Release            *ReleaseStatus `json:"release,omitempty"`
	History            []HistoryEntry `json:"history,omitempty"`
	Failures           *FailureStatus `json:"failures,omitempty"`
	Published          []string       `json:"published,omitempty"` // the chart's status keys (AnnotationStatusKey)
	// The AnnotationReconcileRequestedAt value the reconcile that wrote this saw.
	LastHandledReconcileAt string `json:"lastHandledReconcileAt,omitempty"`
	// The AnnotationTestRequestedAt value whose test run was last answered.
	LastHandledTestAt string `json:"lastHandledTestAt,omitempty"`
	// ActingAs is whom rudder acts as for the resource: the user name of the
	// ServiceAccount it impersonates, or identity.Self for its own rights.
	ActingAs   string             `json:"actingAs,omitempty"`
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// ReleaseStatus describes the deployed revision (the newest one when none is
// deployed). It never holds the manifest or the values.
type ReleaseStatus struct {
	Name         string       `json:"name"`
	Revision     int          `json:"revision,omitempty"`
	Chart        string       `json:"chart,omitempty"`
	ChartVersion string       `json:"chartVersion,omitempty"`
	AppVersion   string       `json:"appVersion,omitempty"`
	Status       string       `json:"status,omitempty"`
	ValuesDigest string       `json:"valuesDigest,omitempty"`
	ChartDigest  string       `json:"chartDigest,omitempty"`
	Updated      *metav1.Time `json:"updated,omitempty"`
}

// FailureStatus is the count of failed tries for one pair of digests, where
// a restarted rudder finds it (failures live in memory otherwise).
type FailureStatus struct {
	Count        int          `json:"count"`
	Reason       string       `json:"reason,omitempty"`
	Message      string       `json:"message,omitempty"`
	Last         *metav1.Time `json:"last,omitempty"`
	ValuesDigest string       `json:"valuesDigest"`
	ChartDigest  string       `json:"chartDigest"`
}

// HistoryEntry is one revision of a release in status.history, the way
// `helm history` shows it.
type HistoryEntry struct {
	Revision     int          `json:"revision"`
	Updated      *metav1.Time `json:"updated,omitempty"`
	Status       string       `json:"status"`
	Chart        string       `json:"chart,omitempty"`
	ChartVersion string       `json:"chartVersion,omitempty"`
	AppVersion   string       `json:"appVersion,omitempty"`
	ValuesDigest string       `json:"valuesDigest,omitempty"`
	Description  string       `json:"description,omitempty"`
	Test         *HistoryTest `json:"test,omitempty"`
}

// HistoryTest is the last run of a revision's chart tests in status.history.
type HistoryTest struct {
	Result    string       `json:"result"`
	Completed *metav1.Time `json:"completed,omitempty"`
}
