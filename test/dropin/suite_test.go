package dropin

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/rudder-operator/rudder/internal/cli"
	"github.com/rudder-operator/rudder/internal/manager"
	"github.com/rudder-operator/rudder/test/testenv"
)

// watchesFile is what a chart author writes: one entry per chart.
const watchesFile = "watches.yaml"

var (
	ctx = context.Background()
	k8s client.Client
	// manifestsOutput is what `rudder manifests` printed: the files it wrote and its warnings.
	manifestsOutput string
)

// TestMain starts envtest, generates the CRD of each kind of watchesFile with
// `rudder manifests` (the command behind `make manifests`), installs them and
// runs a rudder manager on that file, as `--watches-file` does.
func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	env, cfg, err := testenv.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = env.Stop() }()
	crdDir, err := os.MkdirTemp("", "rudder-dropin-crds-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = os.RemoveAll(crdDir) }()
	// The one command a chart author runs: `rudder manifests` (make manifests).
	var out bytes.Buffer
	if err := cli.Run(ctx, []string{"manifests", "--watches-file", watchesFile, "--output-dir", crdDir}, cli.Options{IO: genericiooptions.IOStreams{Out: &out, ErrOut: &out}}); err != nil {
		fmt.Fprintf(os.Stderr, "rudder manifests: %v\n%s", err, out.String())
		return 1
	}
	manifestsOutput = out.String()
	if _, err := envtest.InstallCRDs(cfg, envtest.CRDInstallOptions{Paths: []string{crdDir}, ErrorIfPathMissing: true}); err != nil {
		fmt.Fprintln(os.Stderr, "installing the CRDs:", err)
		return 1
	}
	sch := runtime.NewScheme() // client-go's kinds and CustomResourceDefinitions
	if err := errors.Join(scheme.AddToScheme(sch), apiextensionsv1.AddToScheme(sch)); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if k8s, err = client.New(cfg, client.Options{Scheme: sch}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	log := testenv.Logger()
	ctrl.SetLogger(log)
	mgr, err := manager.New(manager.Options{Config: cfg, WatchesFile: watchesFile, MetricsAddr: "0", ProbeAddr: "0"}, log)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return testenv.RunWithManager(m, mgr)
}
