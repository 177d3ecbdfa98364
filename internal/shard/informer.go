package shard

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	toolscache "k8s.io/client-go/tools/cache"
)

// Mode is where a shard's objects are told from the others'.
type Mode string

const (
	// ModeServer is a shard whose API server filters (ShardSelector); rudder checks again.
	ModeServer Mode = "server"
	// ModeClient is a shard whose API server sends every object; rudder keeps its own.
	ModeClient Mode = "client"
)

// NewInformer returns a constructor of shared informers (controller-runtime's
// cache.Options.NewInformer) whose lists and watches hold only s's objects:
// in ModeServer they send s's selector, and in both modes they drop any
// object of another shard, so a cache never holds one. Unsharded, they pass
// everything and only count it (rudder_shard_objects_received_total).
func (s Shard) NewInformer(mode Mode) func(toolscache.ListerWatcher, runtime.Object, time.Duration, toolscache.Indexers) toolscache.SharedIndexInformer {
	return func(lw toolscache.ListerWatcher, obj runtime.Object, resync time.Duration, indexers toolscache.Indexers) toolscache.SharedIndexInformer {
		lw = s.listWatch(toolscache.ToListerWatcherWithContext(lw), mode, kindOf(obj))
		return toolscache.NewSharedIndexInformer(lw, obj, resync, indexers)
	}
}

func (s Shard) listWatch(lw toolscache.ListerWatcherWithContext, mode Mode, kind string) *toolscache.ListWatch {
	selector := s.Selector()
	listed, watched := countersOf(kind, "list"), countersOf(kind, "watch")
	owns := s.owner()
	return &toolscache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			if mode == ModeServer && s.Sharded() {
				opts.ShardSelector = selector
			}
			list, err := lw.ListWithContext(ctx, opts)
			if err != nil {
				return nil, err
			}
			return list, s.keepOwn(list, owns, listed)
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			if mode == ModeServer && s.Sharded() {
				opts.ShardSelector = selector
			}
			w, err := lw.WatchWithContext(ctx, opts)
			if err != nil {
				return nil, err
			}
			// An object never changes namespace, so it never moves between
			// shards: dropping the others' events loses nothing of ours.
			return watch.Filter(w, func(e watch.Event) (watch.Event, bool) {
				if o, err := meta.Accessor(e.Object); err == nil && (e.Type == watch.Added || e.Type == watch.Modified || e.Type == watch.Deleted) {
					own := owns(o.GetNamespace())
					watched.add(own)
					return e, own
				}
				return e, true // bookmarks and errors
			}), nil
		},
	}
}

// keepOwn removes from list the items of other shards, counting both.
func (s Shard) keepOwn(list runtime.Object, owns func(namespace string) bool, c counters) error {
	if !s.Sharded() {
		c.own.Add(float64(meta.LenList(list)))
		return nil
	}
	items, err := meta.ExtractListWithAlloc(list)
	if err != nil {
		return err
	}
	kept := items[:0]
	for _, it := range items {
		if o, err := meta.Accessor(it); err == nil && owns(o.GetNamespace()) {
			kept = append(kept, it)
			c.add(true)
		} else {
			c.add(false)
		}
	}
	if len(kept) == len(items) {
		return nil
	}
	return meta.SetList(list, kept)
}
