package bench

import (
	"context"
	"fmt"
	"os"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// column is one column of the table: what it measures and how the scenarios
// drive it. The floor has an applier and no custom resource; the operator
// columns have an operator and the kind it serves.
type column struct {
	name  string
	gvk   *schema.GroupVersionKind
	op    *operator
	floor *floorRunner
}

// usage is what the column's measured processes have used so far.
func (col *column) usage() (usage, error) {
	if col.floor != nil {
		return col.floor.usage(), nil
	}
	return col.op.usage()
}

// peaks returns the peak RSS, anonymous RSS and Go heap of the column's
// processes.
func (col *column) peaks() memoryPeaks {
	if col.floor != nil {
		return col.floor.peaks
	}
	return col.op.peaks()
}

// scenarioRun runs the scenarios of one column in its namespace.
type scenarioRun struct {
	c   client.Client
	cfg config
	col *column
	cp  *controlPlane
	ns  string
	res *result
}

// logf prints progress at once (testing's logs wait until the end).
func (s *scenarioRun) logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench: %s: %s\n", s.col.name, fmt.Sprintf(format, args...))
}

// run runs the six scenarios in order and returns the column's figures. An
// error means a scenario did not converge in time, or the cluster failed.
func (s *scenarioRun) run(ctx context.Context) (*result, error) {
	s.res = newResult(s.cfg.N)
	steps := []struct {
		name string
		fn   func(context.Context) error
	}{
		{"cold install", s.coldInstall},
		{"idle and churn", s.idleAndChurn},
		{"change wave", s.changeWave},
		{"restart", s.restart},
		{"chart rollout", s.chartRollout},
		{"delete all", s.deleteAll},
	}
	u0, err := s.col.usage()
	if err != nil {
		return nil, err
	}
	s.res.Profile = map[string]counts{}
	for i, step := range steps {
		before, err := s.col.usage()
		if err != nil {
			return s.res, err
		}
		if err := step.fn(ctx); err != nil {
			return s.res, fmt.Errorf("%s: %s: %w", s.col.name, step.name, err)
		}
		u, err := s.col.usage()
		if err != nil {
			return s.res, err
		}
		if slices.Contains(profileScenarios, step.name) {
			s.res.Profile[step.name] = u.profile.sub(before.profile)
		}
		if i == 2 { // scenarios 1–3 end with the change wave
			s.res.Requests = u.sub(u0).requests
		}
	}
	pk := s.col.peaks()
	s.res.PeakRSS, s.res.PeakAnonRSS, s.res.PeakHeap = pk.RSS, pk.Anon, pk.Heap
	return s.res, nil
}

// spent is what a measured scenario cost: its wall time in seconds, the
// column's CPU-seconds, the control plane's CPU-seconds (NaN off the local
// cluster) and the share of the machine's CPU time that was busy.
type spent struct{ wall, cpu, controlPlane, busy float64 }

// measure runs act, then waits for done from act's start; it returns what
// that cost until done.
func (s *scenarioRun) measure(ctx context.Context, what string, act func(context.Context) error, done check) (spent, error) {
	before, err := s.col.usage()
	if err != nil {
		return spent{}, err
	}
	cp0 := s.cp.cpu()
	m0, err := machineCPU()
	if err != nil {
		return spent{}, err
	}
	start := time.Now()
	if err := act(ctx); err != nil {
		return spent{}, err
	}
	d, err := waitFor(ctx, start, s.cfg.timeout(), what, done)
	if err != nil {
		return spent{}, err
	}
	after, err := s.col.usage()
	if err != nil {
		return spent{}, err
	}
	m1, err := machineCPU()
	if err != nil {
		return spent{}, err
	}
	cpCPU, cpParts := s.cp.cpuSince(cp0)
	sp := spent{wall: d.Seconds(), cpu: after.cpu - before.cpu, controlPlane: cpCPU, busy: busyShare(m0, m1)}
	s.logf("%s: done in %.1fs, %.1f CPU-s; control plane %.1f CPU-s (%s); machine %.0f%% busy",
		what, sp.wall, sp.cpu, sp.controlPlane, cpParts, 100*sp.busy)
	return sp, nil
}

// ready is the convergence of every scenario that ends with all WebApps
// Ready on image: every Deployment rolled out and ready and, for rudder, every
// WebApp Running.
func (s *scenarioRun) ready(image string) check {
	deployments := func(ctx context.Context) (bool, string, error) {
		return deploymentsReady(ctx, s.c, s.ns, s.cfg.N, image)
	}
	if s.col.name != columnRudder {
		return deployments
	}
	return all(deployments, func(ctx context.Context) (bool, string, error) {
		return webAppsRunning(ctx, s.c, *s.col.gvk, s.ns, s.cfg.N)
	})
}

// coldInstall creates N WebApps (the floor applies their objects) and waits
// until all are Ready.
func (s *scenarioRun) coldInstall(ctx context.Context) (err error) {
	s.res.Cold, err = s.measure(ctx, "cold install", func(ctx context.Context) error {
		if s.col.floor != nil {
			return s.col.floor.run(ctx, s.floorJob("apply", s.cfg.Image))
		}
		return createWebApps(ctx, s.c, *s.col.gvk, s.ns, s.cfg.N, webAppSpec(s.cfg.Image, s.cfg.Replicas))
	}, s.ready(s.cfg.Image))
	return err
}

// idleAndChurn measures the operator's CPU while nothing changes, then while
// pods are deleted, and waits until all WebApps are Ready again. The floor
// has no operator, hence no figures here.
func (s *scenarioRun) idleAndChurn(ctx context.Context) error {
	if s.col.op == nil {
		return nil
	}
	u0, err := s.col.usage()
	if err != nil {
		return err
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(s.cfg.Idle):
	}
	u1, err := s.col.usage()
	if err != nil {
		return err
	}
	s.res.IdleCPUPerMin = (u1.cpu - u0.cpu) * 60 / s.cfg.Idle.Seconds()
	deleted, err := churn(ctx, s.c, s.ns, s.cfg.Churn, s.cfg)
	if err != nil {
		return err
	}
	u2, err := s.col.usage()
	if err != nil {
		return err
	}
	s.res.ChurnCPUPerMin = (u2.cpu - u1.cpu) * 60 / s.cfg.Churn.Seconds()
	s.logf("idle: %.2f CPU-s/min; churn (%d pods deleted): %.2f CPU-s/min", s.res.IdleCPUPerMin, deleted, s.res.ChurnCPUPerMin)
	_, err = waitFor(ctx, time.Now(), s.cfg.timeout(), "Ready again after churn", s.ready(s.cfg.Image))
	return err
}

// changeWave sets the new image on every WebApp (the floor applies the
// objects again with it) and waits until all are rolled out and Ready.
func (s *scenarioRun) changeWave(ctx context.Context) (err error) {
	s.res.Wave, err = s.measure(ctx, "change wave", func(ctx context.Context) error {
		if s.col.floor != nil {
			return s.col.floor.run(ctx, s.floorJob("apply", s.cfg.NewImage))
		}
		return patchImage(ctx, s.c, *s.col.gvk, s.ns, s.cfg.N, s.cfg.NewImage)
	}, s.ready(s.cfg.NewImage))
	return err
}

// restart stops the operator with SIGTERM and starts it again with the N
// WebApps deployed and unchanged, until it has settled.
func (s *scenarioRun) restart(ctx context.Context) error {
	op := s.col.op
	if op == nil {
		return nil
	}
	if err := op.stop(); err != nil {
		return err
	}
	before, err := s.col.usage()
	if err != nil {
		return err
	}
	start := time.Now()
	if err := op.start(2 * time.Minute); err != nil {
		return err
	}
	settleCtx, cancel := context.WithTimeout(ctx, s.cfg.timeout())
	defer cancel()
	settled, err := op.waitSettled(settleCtx, s.cfg.N, s.cfg.Quiet, s.cfg.QuietRate)
	if err != nil {
		return err
	}
	after, err := s.col.usage()
	if err != nil {
		return err
	}
	d := after.sub(before)
	s.res.RestartWall, s.res.RestartCPU, s.res.RestartRequests = settled.Sub(start).Seconds(), d.cpu, d.requests
	if sc, err := op.scrape(); err == nil && sc.has(metricReleaseDecodes) {
		decodes := sc.sum(metricReleaseDecodes)
		s.res.RestartDecodes = &decodes
	}
	if sc, err := op.scrape(); err == nil && sc.has(metricDryRuns) {
		dryRuns := sc.sum(metricDryRuns)
		s.res.RestartDryRuns = &dryRuns
	}
	s.logf("restart: settled after %.1fs, %.1f CPU-s, requests %v", s.res.RestartWall, d.cpu, map[string]float64(d.requests))
	return nil
}

// deleteAll deletes the N WebApps (the floor deletes their objects) and
// waits until no WebApp, Deployment, Service or Helm release Secret is left.
func (s *scenarioRun) deleteAll(ctx context.Context) (err error) {
	s.res.Delete, err = s.measure(ctx, "delete all", func(ctx context.Context) error {
		if s.col.floor != nil {
			return s.col.floor.run(ctx, s.floorJob("delete", s.cfg.NewImage))
		}
		return deleteWebApps(ctx, s.c, *s.col.gvk, s.ns)
	}, func(ctx context.Context) (bool, string, error) {
		return gone(ctx, s.c, s.col.gvk, s.ns)
	})
	return err
}

func (s *scenarioRun) floorJob(op, image string) floorJob {
	return floorJob{Op: op, Namespace: s.ns, N: s.cfg.N, Image: image, Replicas: s.cfg.Replicas, Workers: s.cfg.Workers}
}
