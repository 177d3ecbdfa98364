package helm

import (
	"fmt"
	"sync"
	"time"

	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/chart/common"
	"k8s.io/client-go/discovery"
)

// capabilitiesTTL is how long the cluster's version and API versions are
// reused before they are read again: a CRD installed now is seen by charts
// (.Capabilities.APIVersions.Has) within this time.
const capabilitiesTTL = time.Minute

// capabilities caches what Helm's templates see as .Capabilities. Helm reads
// it afresh for every action, invalidating discovery first: at a thousand
// releases that is a full discovery of the cluster per install or upgrade.
// It is only a cache: with off set, every action reads them afresh, as
// Helm does.
type capabilities struct {
	discovery discovery.CachedDiscoveryInterface
	now       func() time.Time
	off       bool

	mu   sync.Mutex
	caps *common.Capabilities
	read time.Time
}

// get returns a copy of the cached capabilities, reading them again when
// they are older than capabilitiesTTL or the cache is off.
func (c *capabilities) get() (*common.Capabilities, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	if c.caps == nil || c.off || now.Sub(c.read) >= capabilitiesTTL {
		caps, err := readCapabilities(c.discovery)
		if err != nil {
			return nil, err
		}
		c.caps, c.read = caps, now
	}
	cp := *c.caps
	cp.APIVersions = append(common.VersionSet(nil), c.caps.APIVersions...)
	return &cp, nil
}

// readCapabilities reads the server version and API versions as Helm does.
func readCapabilities(dc discovery.CachedDiscoveryInterface) (*common.Capabilities, error) {
	dc.Invalidate()
	version, err := dc.ServerVersion()
	if err != nil {
		return nil, fmt.Errorf("reading the Kubernetes version: %w", err)
	}
	// A registered but unavailable API service fails discovery of its group
	// only; the others are still listed, as Helm does.
	apiVersions, err := action.GetVersionSet(dc)
	if err != nil && !discovery.IsGroupDiscoveryFailedError(err) {
		return nil, fmt.Errorf("reading the cluster's API versions: %w", err)
	}
	return &common.Capabilities{
		APIVersions: apiVersions,
		KubeVersion: common.KubeVersion{Version: version.GitVersion, Major: version.Major, Minor: version.Minor},
		HelmVersion: common.DefaultCapabilities.HelmVersion,
	}, nil
}
