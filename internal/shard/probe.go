package shard

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coordinationv1 "k8s.io/client-go/kubernetes/typed/coordination/v1"
)

// Probe finds out whether the API server filters lists by shard selector
// (the ShardedListAndWatch feature gate): it lists the Lease name, which
// exists in namespace ns, with a selector that matches every namespace but
// ns. A server that filters returns nothing; one that ignores the selector,
// the Lease. A server that refuses the selector does not filter either; its
// error is returned with ModeClient for the log.
func Probe(ctx context.Context, leases coordinationv1.LeasesGetter, ns, name string) (Mode, error) {
	list, err := leases.Leases(ns).List(ctx, metav1.ListOptions{
		FieldSelector: "metadata.name=" + name,
		ShardSelector: Excluding(ns),
	})
	if err != nil {
		return ModeClient, err
	}
	if len(list.Items) == 0 {
		return ModeServer, nil
	}
	return ModeClient, nil
}
