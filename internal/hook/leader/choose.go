package leader

import (
	"slices"
	"strings"
	"time"
)

// Candidate is what the choice knows of one pod: a pod the resource selects,
// or the Lease's holder, labeled, that it no longer selects.
type Candidate struct {
	// Name is the pod's name.
	Name string
	// Eligible: the pod is selected, Ready, not being deleted, and on a node
	// that is there and Ready.
	Eligible bool
	// Labeled: the pod carries LabelLeader=true.
	Labeled bool
	// Created is the pod's creation time: the oldest eligible pod leads when
	// a new leader must be chosen.
	Created time.Time
}

// Decision is what to do about the pods, in order: take the label off every
// pod of Unlabel, then record Leader in the Lease and label it.
type Decision struct {
	// Leader is the pod to lead; "" when no pod may.
	Leader string
	// Unlabel are the labeled pods other than Leader.
	Unlabel []string
}

// Choose decides who leads, given the Lease's holder ("" for none) and the
// pods. The holder keeps leading while it is eligible, so that neither a
// restart of rudder nor a new pod moves the leader; then a pod already
// labeled (the Lease was lost); then the oldest eligible pod, by name among
// equals.
func Choose(holder string, pods []Candidate) Decision {
	var d Decision
	eligible := slices.DeleteFunc(slices.Clone(pods), func(c Candidate) bool { return !c.Eligible })
	slices.SortFunc(eligible, func(a, b Candidate) int {
		if c := a.Created.Compare(b.Created); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	if i := slices.IndexFunc(eligible, func(c Candidate) bool { return c.Name == holder }); holder != "" && i >= 0 {
		d.Leader = holder
	} else if i := slices.IndexFunc(eligible, func(c Candidate) bool { return c.Labeled }); i >= 0 {
		d.Leader = eligible[i].Name
	} else if len(eligible) > 0 {
		d.Leader = eligible[0].Name
	}
	for _, c := range pods {
		if c.Labeled && c.Name != d.Leader && !slices.Contains(d.Unlabel, c.Name) {
			d.Unlabel = append(d.Unlabel, c.Name)
		}
	}
	slices.Sort(d.Unlabel)
	return d
}
