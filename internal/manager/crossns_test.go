package manager_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/rudder-operator/rudder/test/testenv"
)

// TestAllowCrossNamespaceRefs runs the manager binary with and without
// --allow-cross-namespace-refs against a Network of namespace team-a that
// depends on a Network of team-b that is not Ready. By default the reference
// is refused, Released False CrossNamespaceRef, saying nothing of team-b's
// Network; with the flag, it waits for that Network as for one of its own
// namespace.
func TestAllowCrossNamespaceRefs(t *testing.T) {
	ctrllog.SetLogger(logr.Discard())
	bin := buildManager(t)
	tests := []struct {
		name       string
		args       []string
		wantStatus metav1.ConditionStatus
		wantReason string
		wantMsg    string
	}{
		{name: "refused by default", wantStatus: metav1.ConditionFalse, wantReason: "CrossNamespaceRef",
			wantMsg: `annotation rudder.dev/depends-on: "team-b/network/backend" names another namespace; ` +
				"references stay in the resource's namespace unless the manager runs with --allow-cross-namespace-refs"},
		{name: "allowed by the flag", args: []string{"--allow-cross-namespace-refs"}, wantStatus: metav1.ConditionUnknown,
			wantReason: "DependencyNotReady", wantMsg: "Waiting for Network team-b/backend to be Ready"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env, k8s := startAPIServer(t, "")
			ctx := context.Background()
			for _, ns := range []string{"team-a", "team-b"} {
				if err := k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
					t.Fatal(err)
				}
			}
			// team-b's Network, paused: never Ready.
			backend := network("team-b", "backend", map[string]string{"rudder.dev/paused": "true"})
			front := network("team-a", "front", map[string]string{"rudder.dev/depends-on": "team-b/network/backend"})
			for _, n := range []*unstructured.Unstructured{backend, front} {
				if err := k8s.Create(ctx, n); err != nil {
					t.Fatal(err)
				}
			}
			runManager(t, bin, env, nil, tt.args...)
			testenv.Eventually(t, "Network team-a/front's Released condition", func() error {
				if err := k8s.Get(ctx, client.ObjectKeyFromObject(front), front); err != nil {
					return err
				}
				c := testenv.Condition(front, "Released")
				if c == nil || c.Status != tt.wantStatus || c.Reason != tt.wantReason || !strings.HasPrefix(c.Message, tt.wantMsg) {
					return fmt.Errorf("Released is %+v, want %s %s %q", c, tt.wantStatus, tt.wantReason, tt.wantMsg)
				}
				return nil
			})
			if revs, err := testenv.Revisions(ctx, k8s, "team-a", "network-front"); err != nil || len(revs) != 0 {
				t.Errorf("Network team-a/front has revisions %v (err %v), want none while its dependency holds it", revs, err)
			}
		})
	}
}

// network is a Network ns/name with annotations.
func network(ns, name string, annotations map[string]string) *unstructured.Unstructured {
	n := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "samplecrd.k8s.io/v1", "kind": "Network",
		"metadata": map[string]any{"name": name, "namespace": ns},
		"spec":     map[string]any{"cidr": "10.0.0.0/16", "gateway": "10.0.0.1"},
	}}
	n.SetAnnotations(annotations)
	return n
}
