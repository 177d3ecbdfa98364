package helm

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/discovery"
	fakediscovery "k8s.io/client-go/discovery/fake"
	clienttesting "k8s.io/client-go/testing"
)

// countingDiscovery is a fake discovery that counts how often it is read.
type countingDiscovery struct {
	*fakediscovery.FakeDiscovery
	invalidations int
}

var _ discovery.CachedDiscoveryInterface = (*countingDiscovery)(nil)

func (d *countingDiscovery) Fresh() bool { return true }
func (d *countingDiscovery) Invalidate() { d.invalidations++ }

func newCountingDiscovery() *countingDiscovery {
	fake := &fakediscovery.FakeDiscovery{Fake: &clienttesting.Fake{}, FakedServerVersion: &version.Info{GitVersion: "v1.37.2", Major: "1", Minor: "37"}}
	fake.Resources = []*metav1.APIResourceList{{GroupVersion: "apps/v1", APIResources: []metav1.APIResource{{Name: "deployments", Kind: "Deployment", Namespaced: true}}}}
	return &countingDiscovery{FakeDiscovery: fake}
}

func TestCapabilities_Get(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	dc := newCountingDiscovery()
	c := &capabilities{discovery: dc, now: func() time.Time { return now }}

	tests := []struct {
		name      string
		advance   time.Duration
		wantReads int
	}{
		{name: "first action reads discovery", wantReads: 1},
		{name: "a second action within the TTL reuses it", advance: 10 * time.Second, wantReads: 1},
		{name: "just before the TTL ends it is still reused", advance: capabilitiesTTL - 10*time.Second - time.Nanosecond, wantReads: 1},
		{name: "once the TTL has passed discovery is read again", advance: time.Nanosecond, wantReads: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			now = now.Add(tt.advance)
			caps, err := c.get()
			if err != nil {
				t.Fatal(err)
			}
			if dc.invalidations != tt.wantReads {
				t.Errorf("discovery read %d times, want %d", dc.invalidations, tt.wantReads)
			}
			if caps.KubeVersion.Version != "v1.37.2" || !caps.APIVersions.Has("apps/v1/Deployment") {
				t.Errorf("capabilities %+v lack the server's version or apps/v1/Deployment", caps)
			}
			// A caller's change stays its own.
			caps.APIVersions = append(caps.APIVersions[:0], "edited/v1")
		})
	}
}
