//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rudder-operator/rudder/test/testenv"
)

// Environment the harness needs; hack/e2e.sh sets both.
const (
	envKubeconfig = "KUBECONFIG"
	envManagerBin = "RUDDER_MANAGER_BIN"
)

// crdName is the CRD of the WebApp kind, from config/crd/bases.
const crdName = "webapps.webapp.my.domain"

// Set up by TestMain before any test runs, read-only afterwards.
var (
	// root is the repository root; kubectl and helm run there.
	root string
)

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

// runMain sets up the cluster and the manager, runs the tests, and stops the
// manager with SIGTERM; a manager that does not exit 0 within shutdownTimeout
// fails the run.
func runMain(m *testing.M) int {
	if err := setUp(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: setup failed: %v\n", err)
		if shared != nil && shared.cur != nil {
			_ = shared.cur.stop(shutdownTimeout)
			shared.cur.printTail(os.Stderr, 100)
		}
		return 1
	}
	code := m.Run()

	rudder := shared.cur
	fmt.Fprintf(os.Stderr, "e2e: sending SIGTERM to the shared manager (pid %d)\n", rudder.pid())
	if err := rudder.stop(shutdownTimeout); err != nil {
		fmt.Fprintf(os.Stderr, "--- FAIL: manager shutdown: expected exit code 0 within %s of SIGTERM; %v\n", shutdownTimeout, err)
		code = 1
	} else {
		fmt.Fprintf(os.Stderr, "--- PASS: manager shutdown: exited with code 0 after SIGTERM\n")
	}
	if code != 0 {
		rudder.printTail(os.Stderr, 100)
		fmt.Fprintf(os.Stderr, "e2e: the managers' whole logs are kept in %s\n", logDir)
	} else {
		_ = os.RemoveAll(logDir)
	}
	return code
}

// setUp checks the environment, installs the CRDs and starts the manager.
func setUp() error {
	var missing []string
	for _, name := range []string{envKubeconfig, envManagerBin} {
		if os.Getenv(name) == "" {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%v not set: the end-to-end tests need a cluster and the manager binary; run `make test-e2e`", missing)
	}
	bin := os.Getenv(envManagerBin)
	if _, err := os.Stat(bin); err != nil {
		return fmt.Errorf("%s=%s: %w; run `make test-e2e` (it builds bin/manager)", envManagerBin, bin, err)
	}
	var err error
	if root, err = testenv.Root(); err != nil {
		return err
	}
	for _, tool := range []string{"kubectl", "helm", "helm3"} {
		if _, err := os.Stat(filepath.Join(root, "bin", tool)); err != nil {
			return fmt.Errorf("bin/%s is missing: run `make tools`: %w", tool, err)
		}
	}

	if _, err := run("kubectl", "apply", "-f", filepath.Join(root, "config", "crd", "bases")); err != nil {
		return fmt.Errorf("installing the CRDs: %w", err)
	}
	if err := waitEstablished(crdName, 2*time.Minute); err != nil {
		return err
	}

	if err := bindLockdownAccount("default"); err != nil {
		return err
	}
	if logDir, err = os.MkdirTemp("", "rudder-e2e-"); err != nil {
		return err
	}
	shared, err = startOperator("manager", sharedNamespaces)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "e2e: started the shared manager %s (pid %d, log %s), ready (%s answered 200)\n",
		bin, shared.cur.pid(), shared.cur.logPath, shared.cur.readyURL())
	return nil
}

// Timeouts of the harness. Generous: the tests run on a slow, shared machine.
const (
	readyTimeout    = 2 * time.Minute
	shutdownTimeout = 30 * time.Second
)

// waitEstablished waits for the CRD name to be Established. kubectl wait
// fails at once on a CRD whose status has no conditions yet, as one just
// created may have: this asks until the condition is there.
func waitEstablished(name string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		out, err := run("kubectl", "get", "crd", name, "-o", `jsonpath={.status.conditions[?(@.type=="Established")].status}`)
		if err == nil && strings.TrimSpace(out) == "True" {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("waiting for CRD %s to be Established: saw %q after %s (err %w)", name, out, timeout, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
