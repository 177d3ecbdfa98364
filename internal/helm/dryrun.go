package helm

import (
	"context"
	"errors"
	"fmt"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage/driver"
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
	skip, err := c.schemas.validate(s.Chart.chart, s.Values)
	if err != nil {
		return nil, err
	}
	restore := c.wrapDriver(func(d driver.Driver) driver.Driver { return leanHistory{d} })
	defer restore()
	hist, err := c.cfg.Releases.History(s.Name)
	if err != nil && !errors.Is(err, driver.ErrReleaseNotFound) {
		return nil, fmt.Errorf("reading release %q: %w", s.Name, err)
	}
	var last *release.Release
	if len(hist) > 0 {
		last = newestOf(hist)
	}
	if last != nil && last.Info != nil && last.Info.Status.IsPending() {
		return nil, fmt.Errorf("release %q: revision %d is %s: %w; try again once it ends", s.Name, last.Version, last.Info.Status, ErrOperationInProgress)
	}
	if last == nil || last.Info != nil && last.Info.Status == release.StatusUninstalled {
		in := action.NewInstall(c.cfg)
		in.ReleaseName, in.Namespace = s.Name, c.namespace
		in.DryRunOption = "server"
		in.Replace = last != nil
		in.PostRenderer = s.PostRenderer
		in.DisableOpenAPIValidation, in.SkipSchemaValidation = true, skip
		rel, err := in.RunWithContext(ctx, s.Chart.chart, s.Values)
		if err != nil {
			return nil, err
		}
		rel.Version = c.trust.next(s.Name) // as Create numbers it
		return fromHelm(rel), nil
	}
	up := action.NewUpgrade(c.cfg)
	up.Namespace = c.namespace
	up.DryRunOption = "server"
	up.PostRenderer = s.PostRenderer
	up.DisableOpenAPIValidation, up.SkipSchemaValidation = true, skip
	rel, err := up.RunWithContext(ctx, s.Name, s.Chart.chart, s.Values)
	if err != nil {
		return nil, err
	}
	return fromHelm(rel), nil
}

// Deployed returns the newest deployed revision of release name and its
// user-supplied values, nil when none is deployed.
func (c *Client) Deployed(name string) (*Release, map[string]any, error) {
	rel, err := c.cfg.Releases.Deployed(name)
	if errors.Is(err, driver.ErrReleaseNotFound) || errors.Is(err, driver.ErrNoDeployedReleases) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("reading release %q: %w", name, err)
	}
	return c.release(rel), rel.Config, nil
}
