package manager

import (
	"context"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/utils/ptr"

	"github.com/rudder-operator/rudder/internal/shard"
)

// TestReshardLock_WaitsForOtherShardCounts: a manager of 3 shards takes or
// renews its leader Lease only while no manager of another shard count
// leads, unless that one acquired its Lease after it did.
func TestReshardLock_WaitsForOtherShardCounts(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	lease := func(name, holder string, renewed, acquired time.Duration) *coordinationv1.Lease {
		return &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "operators"},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(holder), LeaseDurationSeconds: ptr.To[int32](15),
				RenewTime:   ptr.To(metav1.NewMicroTime(now.Add(-renewed))),
				AcquireTime: ptr.To(metav1.NewMicroTime(now.Add(-acquired)))},
		}
	}
	takeover := resourcelock.LeaderElectionRecord{AcquireTime: metav1.NewTime(now)}
	renewal := resourcelock.LeaderElectionRecord{AcquireTime: metav1.NewTime(now.Add(-time.Hour))}
	tests := []struct {
		name   string
		leases []*coordinationv1.Lease
		ler    resourcelock.LeaderElectionRecord
		want   string
	}{
		{"alone", nil, takeover, ""},
		{"a shard of the same count leads", []*coordinationv1.Lease{lease("rudder-shard-1-of-3.rudder.dev", "b", time.Second, time.Minute)}, takeover, ""},
		{"4 shards lead", []*coordinationv1.Lease{lease("rudder-shard-2-of-4.rudder.dev", "b", time.Second, time.Minute)}, takeover, "managers of 4 shard(s) to stop"},
		{"the unsharded manager leads", []*coordinationv1.Lease{lease("rudder.rudder.dev", "old", time.Second, time.Minute)}, takeover, "managers of 1 shard(s) to stop"},
		{"4 shards led, their Lease expired", []*coordinationv1.Lease{lease("rudder-shard-2-of-4.rudder.dev", "b", time.Minute, time.Hour)}, takeover, ""},
		{"4 shards led, their Lease released", []*coordinationv1.Lease{lease("rudder-shard-2-of-4.rudder.dev", "", time.Second, time.Minute)}, takeover, ""},
		{"renewal: 4 shards took over later", []*coordinationv1.Lease{lease("rudder-shard-2-of-4.rudder.dev", "b", time.Second, time.Minute)}, renewal, ""},
		{"renewal: 4 shards led before", []*coordinationv1.Lease{lease("rudder-shard-2-of-4.rudder.dev", "b", time.Second, 2*time.Hour)}, renewal, "managers of 4 shard(s)"},
		{"another Lease", []*coordinationv1.Lease{lease("rudder-holder-x", "x", time.Second, time.Minute)}, takeover, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs := fake.NewClientset()
			for _, l := range tt.leases {
				if _, err := cs.CoordinationV1().Leases("operators").Create(context.Background(), l, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			lock, err := newReshardLock(cs, shard.Shard{Index: 0, Count: 3}, "operators", leaderElectionID(shard.Shard{Index: 0, Count: 3}), "me")
			if err != nil {
				t.Fatal(err)
			}
			lock.now = func() time.Time { return now }
			err = lock.othersLead(context.Background(), tt.ler)
			if (err == nil) != (tt.want == "") || err != nil && !strings.Contains(err.Error(), tt.want) {
				t.Errorf("othersLead = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestLabelSelector_NamesTheFlag(t *testing.T) {
	if sel, err := labelSelector(""); sel != nil || err != nil {
		t.Errorf("empty: %v, %v; want no selector", sel, err)
	}
	if sel, err := labelSelector("tier in (web,api),team=a"); err != nil || !sel.Matches(labelsOf("tier", "web", "team", "a")) {
		t.Errorf("valid: %v, %v", sel, err)
	}
	_, err := labelSelector("team in (a")
	if err == nil || !strings.Contains(err.Error(), "--watch-label-selector") || !strings.Contains(err.Error(), "team=payments") {
		t.Errorf("malformed: error %v, want one naming the flag and an example", err)
	}
}

func labelsOf(kv ...string) labels.Set {
	s := labels.Set{}
	for i := 0; i+1 < len(kv); i += 2 {
		s[kv[i]] = kv[i+1]
	}
	return s
}
