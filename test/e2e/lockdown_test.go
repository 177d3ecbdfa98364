//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// envLockdownAccount, when set, runs the suite with rudder in lockdown
// (docs/security.md): every operator the tests start acts for each resource
// as this ServiceAccount of its namespace (--default-service-account), and
// every namespace the tests create, and default, gets the account with the
// Roles `rudder rbac` prints for rudder's kinds (with --optional: the reads
// of values-from and depends-on too). hack/e2e.sh runs the acceptance tests
// so before the whole suite.
const envLockdownAccount = "RUDDER_E2E_SERVICE_ACCOUNT"

// lockdownAccount is envLockdownAccount's value; empty: rudder acts as itself.
var lockdownAccount = os.Getenv(envLockdownAccount)

// lockdownArgs returns args with --default-service-account when the suite runs
// in lockdown and args do not choose a mode themselves.
func lockdownArgs(args []string) []string {
	if lockdownAccount == "" || slices.ContainsFunc(args, func(a string) bool {
		return strings.HasPrefix(a, "--default-service-account")
	}) {
		return args
	}
	return append(slices.Clip(args), "--default-service-account="+lockdownAccount)
}

// bindLockdownAccount creates the lockdown account in ns with the Roles of
// rudder's kinds, when the suite runs in lockdown.
func bindLockdownAccount(ns string) error {
	if lockdownAccount == "" {
		return nil
	}
	roles, err := run("rudder", "rbac", "webapp", "network", "database", "leaderelection", "podchaos", "--optional", "-n", ns, "--service-account", lockdownAccount)
	if err != nil {
		return fmt.Errorf("rudder rbac for namespace %s: %w", ns, err)
	}
	file, err := os.CreateTemp("", "rudder-e2e-rbac-*.yaml")
	if err != nil {
		return err
	}
	defer func() { _ = os.Remove(file.Name()) }()
	if _, err := file.WriteString(roles); err != nil {
		return err
	}
	if err := file.Close(); err != nil {
		return err
	}
	if _, err := run("kubectl", "apply", "-f", filepath.Clean(file.Name())); err != nil {
		return fmt.Errorf("binding the lockdown account in namespace %s: %w", ns, err)
	}
	return nil
}
