package admission

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/go-logr/logr"
	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/rudder-operator/rudder/internal/preview"
)

// Previewer previews one custom resource: preview.Previewer.
type Previewer interface {
	Resource(ctx context.Context, obj *unstructured.Unstructured) (preview.Resource, error)
}

// Handler decides the admission of one custom resource.
type Handler struct {
	// Preview renders and dry-runs a resource.
	Preview Previewer
	// Budget bounds a preview: one that takes longer is allowed with a
	// warning. Required.
	Budget time.Duration
	// Serves says whether this manager serves obj (its namespaces, label
	// selector); another's resource is allowed untouched. Default: all.
	Serves func(obj *unstructured.Unstructured) bool
	// Log records each decision.
	Log logr.Logger
}

var _ admission.Handler = (*Handler)(nil)

// Handle implements admission.Handler. It refuses only what the reconciler
// could never apply: a chart that does not render (preview.RenderError) or an
// object the API server refuses (preview.RefusedError). Anything else it
// cannot tell (its own errors, a values Secret not there yet, a preview over
// the budget) is allowed, for the reconciler to report in status as before.
func (h *Handler) Handle(ctx context.Context, req admission.Request) admission.Response {
	if (req.Operation != admissionv1.Create && req.Operation != admissionv1.Update) || req.SubResource != "" {
		return admission.Allowed("")
	}
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON(req.Object.Raw); err != nil {
		return admission.Errored(http.StatusBadRequest, fmt.Errorf("decoding the object: %w", err))
	}
	if obj.GetNamespace() == "" {
		obj.SetNamespace(req.Namespace)
	}
	if h.Serves != nil && !h.Serves(obj) || obj.GetDeletionTimestamp() != nil {
		return admission.Allowed("") // another's, or going: its finalizer's removal must pass
	}
	if req.Operation == admissionv1.Update {
		old := &unstructured.Unstructured{}
		if err := old.UnmarshalJSON(req.OldObject.Raw); err == nil && !rendersDifferently(old, obj) {
			return admission.Allowed("") // such as the reconciler adding its finalizer
		}
	}
	log := h.Log.WithValues("kind", obj.GetKind(), "namespace", obj.GetNamespace(), "name", obj.GetName(), "operation", req.Operation)
	start := time.Now()
	done, err := h.preview(ctx, obj)
	elapsed := time.Since(start)
	if !done {
		log.Info("Allowing a resource whose preview outlasted the budget", "budget", h.Budget)
		return admission.Allowed("").WithWarnings(fmt.Sprintf(
			"rudder: rendering and dry-running the chart took longer than %s; allowed unchecked: its status says whether the release applies", h.Budget))
	}
	var render *preview.RenderError
	var refused *preview.RefusedError
	switch {
	case err == nil:
		log.V(1).Info("Allowing a resource whose release renders and dry-runs", "duration", elapsed)
		return admission.Allowed("")
	case errors.As(err, &render), errors.As(err, &refused):
		// err is preview's, Secrets' values already redacted.
		log.Info("Denying a resource whose release would fail", "duration", elapsed, "reason", err.Error())
		return admission.Denied("rudder: " + err.Error())
	default:
		log.Info("Allowing a resource the preview could not check", "duration", elapsed, "reason", err.Error())
		return admission.Allowed("").WithWarnings("rudder: the chart could not be checked (" + err.Error() + "); allowed: its status says whether the release applies")
	}
}

// preview runs the preview of obj within the budget; done is false when the
// budget ran out first. The preview goes on in the background, its context canceled.
func (h *Handler) preview(ctx context.Context, obj *unstructured.Unstructured) (done bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, h.Budget)
	defer cancel()
	result := make(chan error, 1)
	go func() {
		_, err := h.Preview.Resource(ctx, obj)
		result <- err
	}()
	select {
	case err := <-result:
		if ctx.Err() != nil {
			return false, nil
		}
		return true, err
	case <-ctx.Done():
		return false, nil
	}
}

// rendersDifferently says whether new may render differently from old: its
// spec or its annotations (values sources, the account acted as, hooks'
// inputs) changed. A change of metadata alone, such as a finalizer or a
// label, is not checked.
func rendersDifferently(old, new *unstructured.Unstructured) bool {
	return !equality.Semantic.DeepEqual(old.Object["spec"], new.Object["spec"]) ||
		!equality.Semantic.DeepEqual(old.GetAnnotations(), new.GetAnnotations())
}
