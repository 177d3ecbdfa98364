package chaos

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// evictTimeout bounds one eviction. The API server answers an eviction a
// PodDisruptionBudget refuses with 429 and Retry-After 10s, which client-go
// retries, up to ten times: without a bound, a refused round would hold the
// reconcile for more than a minute and a half.
const evictTimeout = 5 * time.Second

// pdbs are the PodDisruptionBudgets of a namespace, and the disruptions each
// still allows in this round. The hook asks them first, as the Eviction API
// would, so that a refusal is answered at once instead of after the
// retries of evictTimeout.
type pdbs struct {
	items   []policyv1.PodDisruptionBudget
	allowed []int32
}

// budgets reads the PodDisruptionBudgets of ns.
func (h *Hook) budgets(ctx context.Context, ns string) (*pdbs, error) {
	var list policyv1.PodDisruptionBudgetList
	if err := h.Reader.List(ctx, &list, client.InNamespace(ns)); err != nil {
		return nil, fmt.Errorf("listing the PodDisruptionBudgets: %w", err)
	}
	b := &pdbs{items: list.Items, allowed: make([]int32, len(list.Items))}
	for i, p := range list.Items {
		b.allowed[i] = p.Status.DisruptionsAllowed
	}
	return b, nil
}

// selecting returns the indexes of the budgets that select pod.
func (b *pdbs) selecting(pod *corev1.Pod) []int {
	var out []int
	for i, p := range b.items {
		sel, err := metav1.LabelSelectorAsSelector(p.Spec.Selector)
		if err != nil || p.Spec.Selector == nil || sel.Empty() || !sel.Matches(labels.Set(pod.Labels)) {
			continue
		}
		out = append(out, i)
	}
	return out
}

// refuses says why the Eviction API would refuse to evict pod now, "" when
// no budget is known to stand in the way (b nil: the action is kill).
func (b *pdbs) refuses(pod *corev1.Pod) string {
	if b == nil || pod == nil {
		return ""
	}
	for _, i := range b.selecting(pod) {
		if b.allowed[i] <= 0 {
			return fmt.Sprintf("the eviction of pod %s was refused: PodDisruptionBudget %s allows no disruption now (%d of %d pods healthy, %d desired)",
				pod.Name, b.items[i].Name, b.items[i].Status.CurrentHealthy, b.items[i].Status.ExpectedPods, b.items[i].Status.DesiredHealthy)
		}
	}
	return ""
}

// took counts the eviction of pod against the budgets that select it.
func (b *pdbs) took(pod *corev1.Pod) {
	if b == nil || pod == nil {
		return
	}
	for _, i := range b.selecting(pod) {
		b.allowed[i]--
	}
}
