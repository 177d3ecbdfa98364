package manager

import (
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/cache"

	"github.com/rudder-operator/rudder/internal/reconcile"
	"github.com/rudder-operator/rudder/internal/rollout"
)

// rollouts is the cache of ChartRollouts: every shard reads them all, as
// each moves its share of every kind's rollout.
func (b *builder) rollouts() (cache.Cache, error) {
	c, err := cache.New(b.cfg, cache.Options{Scheme: b.mgr.GetScheme(), Mapper: b.mgr.GetRESTMapper(), HTTPClient: b.mgr.GetHTTPClient()})
	if err != nil {
		return nil, fmt.Errorf("creating the cache of ChartRollouts: %w", err)
	}
	if err := b.mgr.Add(warmCache{c}); err != nil {
		return nil, err
	}
	return c, nil
}

// addRollout stages the changes of r's chart: a rollout.Runner that r asks
// which resources may run it, and tells how each stands.
func (b *builder) addRollout(r *reconcile.Reconciler, rollouts cache.Cache) error {
	chrt, err := r.Watch.LoadChart()
	if err != nil {
		return fmt.Errorf("kind %s: %w", r.Watch.GVK.Kind, err)
	}
	runner := &rollout.Runner{
		Kind:           r.Watch.GVK,
		Policy:         r.Watch.Rollout,
		Chart:          chrt.Name() + "-" + chrt.Version(),
		Digest:         r.Watch.ChartDigest(chrt.Digest()),
		OverrideValues: r.Watch.OverrideValues,
		Shard:          b.opts.Shard,
		Namespaces:     b.opts.Namespaces,
		Reader:         rollouts,
		Client:         b.mgr.GetClient(),
		Events:         r.Recorder,
		Fleet:          r,
	}
	runner.Enqueue = r.Enqueue
	r.Rollout = runner
	return b.mgr.Add(runner)
}
