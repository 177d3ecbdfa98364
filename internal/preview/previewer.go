package preview

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Previewer is a Diff whose clients, REST mapper and Helm getter are kept
// between calls, for a caller that previews many resources over time, as the
// admission webhook does. It is safe for concurrent use.
type Previewer struct{ d *differ }

// New returns a Previewer with opts, filled in as Diff fills them.
func New(opts Options) (*Previewer, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	d, err := newDiffer(opts)
	if err != nil {
		return nil, err
	}
	return &Previewer{d: d}, nil
}

// Resource previews obj as Diff does, one resource.
func (p *Previewer) Resource(ctx context.Context, obj *unstructured.Unstructured) (Resource, error) {
	res, err := p.d.resource(ctx, obj.DeepCopy())
	if err != nil {
		return res, fmt.Errorf("%s %s/%s: %w", obj.GetKind(), namespaceOr(obj.GetNamespace(), p.d.opts.Namespace), obj.GetName(), err)
	}
	return res, nil
}
