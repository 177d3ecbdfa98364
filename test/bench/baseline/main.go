package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/operator-framework/helm-operator-plugins/pkg/annotation"
	"github.com/operator-framework/helm-operator-plugins/pkg/reconciler"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/rudder-operator/rudder"
	"github.com/rudder-operator/rudder/internal/watches"
	"github.com/rudder-operator/rudder/test/bench/webappchart"
)

// gvk is the baseline's WebApp kind; test/bench derives its CRD from rudder's.
var gvk = schema.GroupVersionKind{Group: "baseline.bench.rudder.dev", Version: "v1", Kind: "WebApp"}

// The hybrid scaffold's default reconcile period (its defaultReconcilePeriod).
const reconcilePeriod = time.Minute

func main() {
	var metricsAddr, probeAddr string
	flag.StringVar(&metricsAddr, "metrics-bind-address", ":8080", "address of the metrics endpoint")
	flag.StringVar(&probeAddr, "health-probe-bind-address", ":8081", "address of the /healthz and /readyz endpoints")
	flag.Parse()
	if err := run(metricsAddr, probeAddr); err != nil {
		fmt.Fprintln(os.Stderr, "baseline:", err)
		os.Exit(1)
	}
}

func run(metricsAddr, probeAddr string) error {
	ctrl.SetLogger(zap.New(zap.UseDevMode(false)))
	workers, err := webAppWorkers()
	if err != nil {
		return err
	}
	chrt, err := webappchart.Load()
	if err != nil {
		return err
	}
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return err
	}
	mgr, err := ctrl.NewManager(ctrl.GetConfigOrDie(), ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: metricsAddr},
		HealthProbeBindAddress: probeAddr,
		Controller:             config.Controller{UsePriorityQueue: ptr.To(false)},
	})
	if err != nil {
		return fmt.Errorf("creating the manager: %w", err)
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return err
	}
	r, err := reconciler.New(
		reconciler.WithChart(*chrt),
		reconciler.WithGroupVersionKind(gvk),
		reconciler.WithOverrideValues(nil),
		reconciler.SkipDependentWatches(false),
		reconciler.WithMaxConcurrentReconciles(workers),
		reconciler.WithReconcilePeriod(reconcilePeriod),
		reconciler.WithInstallAnnotations(annotation.DefaultInstallAnnotations...),
		reconciler.WithUpgradeAnnotations(annotation.DefaultUpgradeAnnotations...),
		reconciler.WithUninstallAnnotations(annotation.DefaultUninstallAnnotations...),
	)
	if err != nil {
		return fmt.Errorf("creating the helm reconciler: %w", err)
	}
	if err := r.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up the helm reconciler: %w", err)
	}
	return mgr.Start(ctrl.SetupSignalHandler())
}

// webAppWorkers is WebApp's maxConcurrentReconciles in rudder's watches.yaml.
func webAppWorkers() (int, error) {
	ws, err := watches.Load(rudder.Files, rudder.WatchesFile)
	if err != nil {
		return 0, err
	}
	for _, w := range ws {
		if w.GVK.Kind == gvk.Kind {
			return w.MaxConcurrentReconciles, nil
		}
	}
	return 0, fmt.Errorf("rudder's watches.yaml has no %s", gvk.Kind)
}
