package helm

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"helm.sh/helm/v4/pkg/action"
	rcommon "helm.sh/helm/v4/pkg/release/common"
	release "helm.sh/helm/v4/pkg/release/v1"
	"helm.sh/helm/v4/pkg/storage/driver"
)

// ErrOperationInProgress is returned by DryRun while the release's newest
// revision is pending: an install, upgrade or rollback is under way, and
// Helm renders nothing over it until it ends.
var ErrOperationInProgress = errors.New("another operation (install/upgrade/rollback) is in progress")

// DryRun renders the revision an install or upgrade of s would make, as
// Install and Upgrade do (the cluster's capabilities, lookups and the
// existing-object checks as the Client's user, s.PostRenderer), and stores
// and applies nothing: Helm's server dry run. It upgrades when the release
// has a stored revision that is not uninstalled, else installs. The returned
// Release has the revision number the action would store and the manifest it
// would apply; its Status is Helm's pending state of that action.
func (c *Client) DryRun(ctx context.Context, s Spec) (*Release, error) {
	c.read.afresh()
	hist, err := c.cfg.Releases.History(s.Name)
	if err != nil && !errors.Is(err, driver.ErrReleaseNotFound) {
		return nil, fmt.Errorf("reading release %q: %w", s.Name, err)
	}
	var last *release.Release
	for _, h := range hist {
		if r, err := v1(h); err == nil && r != nil && (last == nil || r.Version > last.Version) {
			last = r
		}
	}
	if last != nil && last.Info != nil && last.Info.Status.IsPending() {
		return nil, fmt.Errorf("release %q: revision %d is %s: %w; try again once it ends", s.Name, last.Version, last.Info.Status, ErrOperationInProgress)
	}
	if last == nil || last.Info != nil && last.Info.Status == rcommon.StatusUninstalled {
		in := action.NewInstall(c.cfg)
		in.ReleaseName, in.Namespace = s.Name, c.namespace
		in.DryRunStrategy = action.DryRunServer
		in.Replace = last != nil
		in.PostRenderer = s.PostRenderer
		in.ServerSideApply, in.ForceConflicts = true, forceConflicts
		in.WaitStrategy = waitStrategy
		in.DisableOpenAPIValidation = true
		r, err := in.RunWithContext(ctx, s.Chart.chart, s.Values)
		if err != nil {
			return nil, err
		}
		rel, err := v1(r)
		if err != nil {
			return nil, err
		}
		rel.Version = c.trust.next(s.Name) // as Create numbers it
		return fromHelm(rel), nil
	}
	up := action.NewUpgrade(c.cfg)
	up.Namespace = c.namespace
	up.DryRunStrategy = action.DryRunServer
	up.PostRenderer = s.PostRenderer
	up.ServerSideApply, up.ForceConflicts = serverSideApply, forceConflicts
	up.WaitStrategy = waitStrategy
	up.DisableOpenAPIValidation = true
	r, err := up.RunWithContext(ctx, s.Name, s.Chart.chart, s.Values)
	if err != nil && strings.Contains(err.Error(), ErrOperationInProgress.Error()) {
		// Helm's own check, over its own read: an operation began since ours.
		return nil, fmt.Errorf("release %q: %w; try again once it ends", s.Name, ErrOperationInProgress)
	}
	if err != nil {
		return nil, err
	}
	rel, err := v1(r)
	if err != nil {
		return nil, err
	}
	return fromHelm(rel), nil
}

// Deployed returns the newest deployed revision of release name and its
// user-supplied values, nil when none is deployed.
func (c *Client) Deployed(name string) (*Release, map[string]any, error) {
	c.read.afresh()
	r, err := c.cfg.Releases.Deployed(name)
	if errors.Is(err, driver.ErrReleaseNotFound) || errors.Is(err, driver.ErrNoDeployedReleases) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("reading release %q: %w", name, err)
	}
	rel, err := v1(r)
	if err != nil {
		return nil, nil, err
	}
	return c.release(rel), rel.Config, nil
}
