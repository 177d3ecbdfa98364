package manager

import (
	"context"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/rudder-operator/rudder/internal/shard"
)

// newInformerFunc builds the shared informers of a cache.
type newInformerFunc = func(toolscache.ListerWatcher, runtime.Object, time.Duration, toolscache.Indexers) toolscache.SharedIndexInformer

// shardInformers returns the informer constructor of every cache: for one
// shard of several, one that keeps only the shard's namespaces, sending the
// API server the shard's selector when it filters by it (found out with
// shard.Probe and this process's Lease, lease in ns). It logs the mode.
// Unsharded, the informers keep everything and count what they receive.
func shardInformers(cs kubernetes.Interface, s shard.Shard, ns, lease string, log logr.Logger) (newInformerFunc, error) {
	if !s.Sharded() {
		return s.NewInformer(shard.ModeClient), nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	mode, err := shard.Probe(ctx, cs.CoordinationV1(), ns, lease)
	switch {
	case mode == shard.ModeServer:
		log.Info("Sharded: the API server filters lists and watches by shard", "shard", s.String(), "mode", mode, "selector", s.Selector())
	case err != nil:
		log.Info("Sharded: the API server refused the shard selector; rudder filters what it receives instead",
			"shard", s.String(), "mode", mode, "error", err.Error())
	default:
		log.Info("Sharded: the API server ignores shard selectors (feature gate ShardedListAndWatch off); rudder filters what it receives instead",
			"shard", s.String(), "mode", mode)
	}
	return s.NewInformer(mode), nil
}

// leaderElectionID is the leader Lease's name: one per shard, so that each
// shard has its own leader and standbys.
func leaderElectionID(s shard.Shard) string {
	if !s.Sharded() {
		return "rudder.rudder.dev"
	}
	return "rudder-shard-" + s.String() + ".rudder.dev"
}

// labelSelector parses --watch-label-selector; nil when empty.
func labelSelector(s string) (labels.Selector, error) {
	if s == "" {
		return nil, nil
	}
	sel, err := labels.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("--watch-label-selector=%q: %w; write it as kubectl's -l takes it, such as team=payments or tier in (web,api)", s, err)
	}
	return sel, nil
}
