package admission

import (
	"context"
	"fmt"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rudder-operator/rudder/internal/manager"
)

// Configuration returns the ValidatingWebhookConfiguration of URL mode:
// create and update of each kind served, never delete nor a subresource
// (status), for the namespaces served; failurePolicy Ignore, so that a
// stopped manager blocks nothing; a timeout of the budget and a margin. Its
// caBundle is left to the rotator.
func Configuration(name, url string, served manager.Served, mapper meta.RESTMapper, budget time.Duration) (*admissionregistrationv1.ValidatingWebhookConfiguration, error) {
	var rules []admissionregistrationv1.RuleWithOperations
	for _, w := range served.Watches {
		m, err := mapper.RESTMapping(w.GVK.GroupKind(), w.GVK.Version)
		if err != nil {
			return nil, fmt.Errorf("webhook rule of kind %s: %w; install its CRD first (make install)", w.GVK.Kind, err)
		}
		scope := admissionregistrationv1.NamespacedScope
		if m.Scope.Name() == meta.RESTScopeNameRoot {
			scope = admissionregistrationv1.ClusterScope
		}
		rules = append(rules, admissionregistrationv1.RuleWithOperations{
			Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
			Rule: admissionregistrationv1.Rule{APIGroups: []string{w.GVK.Group}, APIVersions: []string{w.GVK.Version},
				Resources: []string{m.Resource.Resource}, Scope: &scope},
		})
	}
	wh := admissionregistrationv1.ValidatingWebhook{
		Name:                    "render.rudder.dev",
		ClientConfig:            admissionregistrationv1.WebhookClientConfig{URL: &url},
		Rules:                   rules,
		FailurePolicy:           ptr.To(admissionregistrationv1.Ignore),
		SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
		TimeoutSeconds:          ptr.To(TimeoutSeconds(budget)),
		AdmissionReviewVersions: []string{"v1"},
	}
	if len(served.Namespaces) > 0 {
		wh.NamespaceSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
			Key: corev1.LabelMetadataName, Operator: metav1.LabelSelectorOpIn, Values: served.Namespaces}}}
	}
	if served.Selector != nil && !served.Selector.Empty() {
		sel, err := metav1.ParseToLabelSelector(served.Selector.String())
		if err != nil {
			return nil, err
		}
		wh.ObjectSelector = sel
	}
	return &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app.kubernetes.io/name": "rudder", "app.kubernetes.io/component": "webhook"}},
		Webhooks:   []admissionregistrationv1.ValidatingWebhook{wh},
	}, nil
}

// applyConfiguration creates vwc, or updates the one there to it, keeping the
// CA bundle the rotator injected.
func applyConfiguration(ctx context.Context, c client.Client, vwc *admissionregistrationv1.ValidatingWebhookConfiguration) error {
	live := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	err := c.Get(ctx, client.ObjectKeyFromObject(vwc), live)
	if apierrors.IsNotFound(err) {
		if err := c.Create(ctx, vwc); err != nil {
			return fmt.Errorf("creating ValidatingWebhookConfiguration %s: %w", vwc.Name, err)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading ValidatingWebhookConfiguration %s: %w", vwc.Name, err)
	}
	for i := range vwc.Webhooks {
		if i < len(live.Webhooks) {
			vwc.Webhooks[i].ClientConfig.CABundle = live.Webhooks[i].ClientConfig.CABundle
		}
	}
	live.Labels, live.Webhooks = vwc.Labels, vwc.Webhooks
	if err := c.Update(ctx, live); err != nil {
		return fmt.Errorf("updating ValidatingWebhookConfiguration %s: %w", vwc.Name, err)
	}
	return nil
}
