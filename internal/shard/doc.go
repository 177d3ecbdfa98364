// Package shard splits the namespaces of a cluster among M rudder managers.
// Shard i of M owns the namespaces whose 64-bit FNV-1a hash falls in
// [i·2⁶⁴/M, (i+1)·2⁶⁴/M): the split the API server's sharded list and watch
// (KEP-5866, the ShardedListAndWatch feature gate) selects with
// shardRange(object.metadata.namespace, start, end). A release and its
// objects live in its custom resource's namespace, so one shard's caches hold
// only its share of every kind.
// It must never import Helm or package helm, nor the reconcile, manager, cli,
// admission or preview packages.
package shard
