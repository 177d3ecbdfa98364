package rollout

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GVK is the ChartRollout kind. It is cluster-scoped: a tenant, whose Role
// is bound in its namespace, can neither read nor steer it.
var GVK = schema.GroupVersionKind{Group: "rudder.dev", Version: "v1alpha1", Kind: "ChartRollout"}

// Phases of a rollout.
const (
	PhaseProgressing = "Progressing" // steps are moving
	PhasePaused      = "Paused"      // spec.paused: no resource is promoted; those upgrading finish
	PhaseHalted      = "Halted"      // more resources failed than the budget allows: none moves
	PhaseComplete    = "Complete"    // every resource runs the chart
	PhaseUndoing     = "Undoing"     // spec.undo: the resources promoted go back to the chart they had
	PhaseUndone      = "Undone"      // none runs the chart any more but those installed with it
	PhaseSuperseded  = "Superseded"  // a newer chart of the kind rolls out
)

// ChartRollout is the rollout of one chart to the resources of one kind.
type ChartRollout struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              Spec   `json:"spec"`
	Status            Status `json:"status,omitempty"`
}

// Spec names the kind and the chart; paused and undo are what people steer.
type Spec struct {
	Group       string `json:"group"`
	Kind        string `json:"kind"`
	Chart       string `json:"chart"`       // name-version, as helm list shows it
	ChartDigest string `json:"chartDigest"` // the chart digest label of the revisions it makes
	// OverrideValues are the kind's overrideValues with the chart: part of
	// what it rolls out, and what a resource not promoted past it keeps.
	OverrideValues map[string]string `json:"overrideValues,omitempty"`
	// Namespaces are those whose resources it rolls out to, when the
	// manager watches only them; none: every namespace.
	Namespaces []string `json:"namespaces,omitempty"`
	Paused     bool     `json:"paused,omitempty"`
	Undo       bool     `json:"undo,omitempty"`
	// StartedAt is when rudder started the rollout again: the kind's chart
	// came back to this one after another (a revert), and its steps start
	// over from the first.
	StartedAt *metav1.Time `json:"startedAt,omitempty"`
	// ResumedAt is when someone last resumed the rollout: a halted rollout
	// goes on, with its failure budget whole again.
	ResumedAt *metav1.Time `json:"resumedAt,omitempty"`
}

// Status is where the rollout is. The coordinator (the process that owns
// cluster-scoped objects) writes every field but Shards; each shard writes
// its own entry of Shards.
type Status struct {
	ObservedGeneration int64  `json:"observedGeneration,omitempty"`
	Phase              string `json:"phase,omitempty"`
	// Step is the number of the current step, from 1; Steps is how many there are.
	Step  int `json:"step,omitempty"`
	Steps int `json:"steps,omitempty"`
	// StepText is the current step as the kubectl column shows it: "2/4 (10%)".
	StepText string `json:"stepText,omitempty"`
	Total    int    `json:"total"`
	Updated  int    `json:"updated"`
	Ready    int    `json:"ready"`
	Failed   int    `json:"failed"`
	// History has one entry per step started: when it started and ended.
	History []StepRecord `json:"history,omitempty"`
	// FailedResources are the first resources that failed (at most MaxListed).
	FailedResources []Resource         `json:"failedResources,omitempty"`
	Shards          []ShardStatus      `json:"shards,omitempty"`
	Conditions      []metav1.Condition `json:"conditions,omitempty"`
}

// StepRecord is one step of a rollout as it happened.
type StepRecord struct {
	Step      int          `json:"step"`
	Size      string       `json:"size"` // as watches.yaml wrote it: 1, "10%"
	Started   metav1.Time  `json:"started"`
	Completed *metav1.Time `json:"completed,omitempty"`
}

// Resource names one resource of the kind, and why it failed.
type Resource struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Reason    string `json:"reason,omitempty"`
	Message   string `json:"message,omitempty"`
}

// ShardStatus is one shard's share of the current step.
type ShardStatus struct {
	Shard string `json:"shard"` // shard.Shard's name: "all", "1-of-3"
	// Generation is the ChartRollout's generation these counts are for:
	// a resume (a change of spec) starts the budget again.
	Generation int64 `json:"generation"`
	Step       int   `json:"step"` // the step these counts are for
	Done       bool  `json:"done"` // every resource of the shard's share is Ready, soaked, or failed
	Total      int   `json:"total"`
	Updated    int   `json:"updated"`
	Ready      int   `json:"ready"`
	Failed     int   `json:"failed"`
	// Undone: with spec.undo, no resource of the shard runs the chart any
	// more, but those that never ran another.
	Undone bool `json:"undone,omitempty"`
	// Broken: a resource's upgrade to the chart failed before anything was
	// stored, for values the chart before it rendered. The rollout halts,
	// whatever its failure budget.
	Broken          bool       `json:"broken,omitempty"`
	FailedResources []Resource `json:"failedResources,omitempty"`
}

// MaxListed bounds the resources a status lists by name.
const MaxListed = 10

// Name is the ChartRollout of kind gvk's chart digest, for the resources of
// namespaces (none: all): the kind's lowercase name, its group, the digest's
// first 12 characters and, for a manager that watches some namespaces only,
// a digest of them, so that managers serving other namespaces of one
// cluster each have their own.
func Name(gvk schema.GroupVersionKind, chartDigest string, namespaces []string) string {
	d := chartDigest
	if len(d) > 12 {
		d = d[:12]
	}
	name := fmt.Sprintf("%s.%s-%s", strings.ToLower(gvk.Kind), gvk.Group, d)
	if len(namespaces) == 0 {
		return name
	}
	sorted := slices.Sorted(slices.Values(namespaces))
	h := sha256.Sum256([]byte(strings.Join(sorted, "\n")))
	return name + "-" + hex.EncodeToString(h[:])[:8]
}

// FromUnstructured reads u as a ChartRollout.
func FromUnstructured(u *unstructured.Unstructured) (*ChartRollout, error) {
	var cr ChartRollout
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &cr); err != nil {
		return nil, fmt.Errorf("reading ChartRollout %s: %w", u.GetName(), err)
	}
	return &cr, nil
}

// ToUnstructured writes cr as an unstructured object of kind GVK.
func ToUnstructured(cr *ChartRollout) (*unstructured.Unstructured, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(cr)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetGroupVersionKind(GVK)
	return u, nil
}

// New returns an empty ChartRollout object to read into.
func New() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(GVK)
	return u
}

// NewList returns an empty list of ChartRollouts to read into.
func NewList() *unstructured.UnstructuredList {
	l := &unstructured.UnstructuredList{}
	l.SetGroupVersionKind(GVK.GroupVersion().WithKind("ChartRolloutList"))
	return l
}

// LabelKind labels each ChartRollout with its kind (LabelValue).
const LabelKind = "rudder.dev/kind"

// LabelValue is gvk's kind and group as the value of LabelKind: "webapp.webapp.my.domain".
func LabelValue(gvk schema.GroupVersionKind) string {
	v := strings.ToLower(gvk.Kind + "." + gvk.Group)
	if len(v) > 63 {
		v = v[:63]
	}
	return strings.TrimRight(v, ".-_")
}
