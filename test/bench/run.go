package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rudder-operator/rudder/test/testenv"
)

// runBench prepares the cluster and runs the scenarios for every column of
// cfg, one column after the other, each in a fresh namespace that is deleted
// afterwards. It returns the results so far with the first error, and cfg as
// run.
func runBench(ctx context.Context, cfg config) (map[string]*result, config, error) {
	results := map[string]*result{}
	root, err := testenv.Root()
	if err != nil {
		return results, cfg, err
	}
	c, err := newClient()
	if err != nil {
		return results, cfg, err
	}
	crdName, err := installCRDs(ctx, c, root)
	if err != nil {
		return results, cfg, err
	}
	defer removeBaselineCRD(c, crdName)
	room, err := ensurePodRoom(ctx, c, cfg.N*cfg.Replicas)
	if err != nil {
		return results, cfg, err
	}
	if room < cfg.N*cfg.Replicas {
		// The WebApp CRD refuses replicas 0: a run without pods is not one.
		return results, cfg, fmt.Errorf("the cluster has room for %d more pods, not the %d of %d WebApps of %d replicas: "+
			"start it with more kwok nodes (RUDDER_KWOK_NODES) or run fewer WebApps (%s)", room, cfg.N*cfg.Replicas, cfg.N, cfg.Replicas, envWebApps)
	}
	logDir, err := os.MkdirTemp("", "rudder-bench-")
	if err != nil {
		return results, cfg, err
	}
	fmt.Fprintf(os.Stderr, "bench: %d WebApps, replicas %d, columns %v; operator logs in %s\n", cfg.N, cfg.Replicas, cfg.Columns, logDir)
	cp := findControlPlane(root)
	for i, name := range cfg.Columns {
		col, err := newColumn(name, root, logDir)
		if err != nil {
			return results, cfg, err
		}
		res, err := runColumn(ctx, c, cfg, col, cp, i == len(cfg.Columns)-1)
		if err != nil {
			return results, cfg, err
		}
		results[name] = res
	}
	return results, cfg, nil
}

// newColumn sets up the column name; operator logs go to logDir.
func newColumn(name, root, logDir string) (*column, error) {
	switch name {
	case columnFloor:
		return &column{name: name, floor: &floorRunner{}}, nil
	case columnBaseline:
		bin, err := binary(envBaseline, root, "baseline", "baseline")
		if err != nil {
			return nil, err
		}
		return &column{name: name, gvk: &baselineWebApp, op: baselineOperator(bin, logDir)}, nil
	case columnRudder:
		bin, err := binary(envManager, root, "manager", "build")
		if err != nil {
			return nil, err
		}
		return &column{name: name, gvk: &rudderWebApp, op: rudderOperator(bin, logDir)}, nil
	}
	return nil, fmt.Errorf("unknown column %q", name)
}

// runColumn runs the scenarios of one column in a namespace of its own,
// starting its operator first and stopping it after (cp is the control
// plane whose CPU the scenarios count), then deletes the
// namespace: waiting until it is gone, unless last, so that the next column
// finds the cluster as this one did. On failure it leaves nothing behind that
// blocks the namespace's deletion.
func runColumn(ctx context.Context, c client.Client, cfg config, col *column, cp *controlPlane, last bool) (*result, error) {
	ns, err := newNamespace(ctx, c, col.name)
	if err != nil {
		return nil, err
	}
	if col.op != nil {
		if err := col.op.start(2 * time.Minute); err != nil {
			return nil, errors.Join(err, abandon(ctx, c, col, ns))
		}
	}
	s := &scenarioRun{c: c, cfg: cfg, col: col, cp: cp, ns: ns}
	res, err := s.run(ctx)
	if col.op != nil && col.op.proc.running() {
		if stopErr := col.op.stop(); stopErr != nil && err == nil {
			err = stopErr
		}
	}
	if err != nil {
		return res, errors.Join(err, abandon(ctx, c, col, ns))
	}
	if last {
		return res, deleteNamespaceNoWait(ctx, c, ns)
	}
	start := time.Now()
	err = deleteNamespace(ctx, c, ns)
	fmt.Fprintf(os.Stderr, "bench: %s: namespace %s deleted in %.1fs\n", col.name, ns, time.Since(start).Seconds())
	return res, err
}

// abandon clears the finalizers of the column's custom resources left in ns
// (their operator has stopped) and deletes ns without waiting.
func abandon(ctx context.Context, c client.Client, col *column, ns string) error {
	if col.gvk != nil {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(col.gvk.GroupVersion().WithKind(col.gvk.Kind + "List"))
		if err := c.List(ctx, list, client.InNamespace(ns)); err == nil {
			patch := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`))
			_ = parallel(len(list.Items), clientWorkers, func(i int) error { return c.Patch(ctx, &list.Items[i], patch) })
		}
	}
	return deleteNamespaceNoWait(ctx, c, ns)
}
