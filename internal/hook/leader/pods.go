package leader

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// pod is a pod the choice considers.
type pod struct {
	corev1.Pod
	selected, eligible bool
}

// gather reads the pods of namespace ns that s selects and, when it is
// labeled but not selected any more, the holder's, each with whether it may
// lead.
func (h *Hook) gather(ctx context.Context, ns string, s spec, holder string) (map[string]*pod, error) {
	var list corev1.PodList
	if err := h.Reader.List(ctx, &list, client.InNamespace(ns), client.MatchingLabelsSelector{Selector: s.selector}); err != nil {
		return nil, fmt.Errorf("listing the pods spec.selector matches: %w", err)
	}
	out := make(map[string]*pod, len(list.Items)+1)
	nodes := map[string]bool{}
	for i := range list.Items {
		p := &pod{Pod: list.Items[i], selected: true}
		if ready(&p.Pod) {
			ok, err := h.nodeOK(ctx, p.Spec.NodeName, nodes)
			if err != nil {
				return nil, err
			}
			p.eligible = ok
		}
		out[p.Name] = p
	}
	if _, seen := out[holder]; holder != "" && !seen {
		var p corev1.Pod
		err := h.Reader.Get(ctx, client.ObjectKey{Namespace: ns, Name: holder}, &p)
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			return nil, fmt.Errorf("reading pod %s, the Lease's holder: %w", holder, err)
		case labeled(&p):
			out[holder] = &pod{Pod: p}
		}
	}
	return out, nil
}

// ready reports whether p runs, is Ready and is not being deleted.
func ready(p *corev1.Pod) bool {
	if p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodRunning {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// nodeOK reports whether node is there, Ready and reachable, remembering
// the answer in seen for the other pods on it.
func (h *Hook) nodeOK(ctx context.Context, name string, seen map[string]bool) (bool, error) {
	if name == "" {
		return false, nil
	}
	if ok, known := seen[name]; known {
		return ok, nil
	}
	var n corev1.Node
	err := h.Reader.Get(ctx, client.ObjectKey{Name: name}, &n)
	if apierrors.IsNotFound(err) {
		seen[name] = false
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading node %s: %w", name, err)
	}
	seen[name] = nodeReady(&n)
	return seen[name], nil
}

// nodeReady reports whether n's Ready condition is True: False when its
// kubelet says so, Unknown once the node lifecycle controller misses its
// heartbeats.
func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func labeled(p *corev1.Pod) bool { return p.Labels[LabelLeader] == "true" }

// candidates is what Choose knows of pods.
func candidates(pods map[string]*pod) []Candidate {
	out := make([]Candidate, 0, len(pods))
	for _, p := range pods {
		out = append(out, Candidate{Name: p.Name, Eligible: p.eligible, Labeled: labeled(&p.Pod), Created: p.CreationTimestamp.Time})
	}
	return out
}

// unlabel takes the label off p and checks, in the API server's answer, that
// it is off. A pod that is gone carries no label.
func unlabel(ctx context.Context, c client.Client, p *pod) error {
	if !labeled(&p.Pod) {
		return nil
	}
	return patchLabel(ctx, c, p, nil)
}

// label puts the label on p, unless it is there.
func label(ctx context.Context, c client.Client, p *pod) error {
	if labeled(&p.Pod) {
		return nil
	}
	return patchLabel(ctx, c, p, "true")
}

// patchLabel sets the label to value (nil removes it) with a merge patch
// bound to p's UID, so that a pod re-created under the name is not touched,
// and confirms the result from the API server's answer.
func patchLabel(ctx context.Context, c client.Client, p *pod, value any) error {
	patch := fmt.Sprintf(`{"metadata":{"uid":%q,"labels":{%q:%s}}}`, p.UID, LabelLeader, jsonValue(value))
	out := p.DeepCopy()
	err := c.Patch(ctx, out, client.RawPatch(types.MergePatchType, []byte(patch)))
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) && value == nil {
		return nil // gone, or another pod under the name: it carries no label of ours
	}
	if err != nil {
		return fmt.Errorf("labeling pod %s %s=%v: %w", p.Name, LabelLeader, value, err)
	}
	if value == nil && labeled(out) || value != nil && !labeled(out) {
		return fmt.Errorf("pod %s: the API server did not keep label %s=%v", p.Name, LabelLeader, value)
	}
	p.Pod = *out
	return nil
}

func jsonValue(v any) string {
	if v == nil {
		return "null"
	}
	return fmt.Sprintf("%q", v)
}
