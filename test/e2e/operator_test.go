//go:build e2e

package e2e

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// operator is one rudder deployment of the suite: the manager process that
// runs for it now, replaced when a test stops or kills it and starts the
// next one. The shared operator serves the namespaces of sharedNamespaces; a
// test that stops, kills or reconfigures the manager gets an operator of its
// own over its own namespace (privateOperator), so that it can run in
// parallel with the others.
type operator struct {
	name     string   // names the logs: <name>.log, <name>.log.1, …
	env      []string // environment of every process, WATCH_NAMESPACE included
	args     []string // flags of every process
	bin      string   // the manager binary; "": RUDDER_MANAGER_BIN's
	cur      *manager // the process running now (or the last one, exited)
	restarts int
}

// shared is the operator the suite starts first.
var shared *operator

// sharedNamespaces are the namespaces the shared operator watches
// (WATCH_NAMESPACE): those of the tests that leave the manager alone. A
// namespace of a test with its own operator must not be among them.
var sharedNamespaces = []string{
	"default", "faults-node", "faults-kube-apiserver", "faults-etcd", "lc-fail", "lc-oob", "lc-oob-helm3",
	"lc-ns-delete", "lc-uninstall-stuck", "metrics", restrictedNamespace, "depends", "values-from", "db-upgrade",
}

// logDir holds the managers' logs, kept when the run fails.
var logDir string

// privateNamespaces holds the namespaces of private operators.
var privateNamespaces sync.Map

// startOperator starts an operator watching namespaces, with args, and waits
// until its manager is ready.
func startOperator(name string, namespaces []string, args ...string) (*operator, error) {
	return startOperatorWith(name, []string{"WATCH_NAMESPACE=" + strings.Join(namespaces, ",")}, args...)
}

// startOperatorWith starts an operator with the environment env (which
// should set WATCH_NAMESPACE) and args, and waits until it is ready.
func startOperatorWith(name string, env []string, args ...string) (*operator, error) {
	o := &operator{name: name, env: env, args: lockdownArgs(args)}
	if err := o.start(); err != nil {
		return o, err
	}
	return o, nil
}

// privateOperator creates namespace ns and starts an operator of the test's
// own that watches only ns, stopped (SIGTERM, exit 0 expected) when the test
// ends, once the namespace is gone.
func privateOperator(t *testing.T, ns string, args ...string) *operator {
	t.Helper()
	if slices.Contains(sharedNamespaces, ns) {
		t.Fatalf("namespace %s is the shared operator's (sharedNamespaces): a private operator needs a namespace of its own", ns)
	}
	// Registered first, so it runs last: the operator uninstalls the
	// namespace's releases while createNamespace's cleanup deletes it.
	var o *operator
	t.Cleanup(func() {
		if o == nil || o.cur == nil {
			return
		}
		select {
		case <-o.cur.exited:
			return
		default:
		}
		if err := o.cur.stop(shutdownTimeout); err != nil {
			t.Errorf("stopping the operator of namespace %s: expected exit code 0 after SIGTERM; %v", ns, err)
		}
	})
	privateNamespaces.Store(ns, true)
	createNamespace(t, ns)
	var err error
	if o, err = startOperator(ns, []string{ns}, args...); err != nil {
		t.Fatalf("starting the operator of namespace %s: %v", ns, err)
	}
	o.logOnFailure(t)
	t.Cleanup(func() { o.ensureRunning(t) })
	return o
}

// ensureRunning starts the operator's next manager when the last one has
// exited: a test that failed between a kill and the next start leaves none,
// and one must run while the test's WebApps and namespace are deleted, to
// uninstall their releases.
func (o *operator) ensureRunning(t *testing.T) {
	t.Helper()
	select {
	case <-o.cur.exited:
		if err := o.start(); err != nil {
			t.Errorf("starting the operator %s again for the cleanup: %v", o.name, err)
		}
	default:
	}
}

// start starts the operator's next manager (the previous one must have
// exited) with extraArgs besides its own, and waits until it is ready.
func (o *operator) start(extraArgs ...string) error {
	if o.cur != nil {
		select {
		case <-o.cur.exited:
		default:
			return fmt.Errorf("operator %s: the manager (pid %d) is still running", o.name, o.cur.pid())
		}
	}
	logPath := filepath.Join(logDir, o.name+".log")
	if o.cur != nil {
		o.restarts++
		logPath = fmt.Sprintf("%s.%d", logPath, o.restarts)
	}
	bin := o.bin
	if bin == "" {
		bin = os.Getenv(envManagerBin)
	}
	m, err := startManager(bin, logPath, o.env, append(slices.Clone(o.args), extraArgs...)...)
	if err != nil {
		return err
	}
	o.cur = m
	return m.waitReady(readyTimeout)
}

// restart stops the manager with how (SIGTERM or SIGKILL) and starts the
// next one with extraArgs besides the operator's own.
func (o *operator) restart(t *testing.T, how string, extraArgs ...string) {
	t.Helper()
	var err error
	switch how {
	case "SIGTERM":
		err = o.cur.stop(shutdownTimeout)
	case "SIGKILL":
		err = o.cur.kill()
	default:
		t.Fatalf("restart: unknown way %q to stop the manager; want SIGTERM or SIGKILL", how)
	}
	if err != nil {
		t.Fatalf("operator %s: stopping the manager (pid %d) with %s: %v", o.name, o.cur.pid(), how, err)
	}
	o.startAgain(t, extraArgs...)
	t.Logf("operator %s: manager stopped with %s; the next one (pid %d, log %s) is ready", o.name, how, o.cur.pid(), o.cur.logPath)
}

// kill SIGKILLs the manager; startAgain starts the next one. Between them,
// the cluster goes on without this operator.
func (o *operator) kill(t *testing.T) {
	t.Helper()
	if err := o.cur.kill(); err != nil {
		t.Fatalf("operator %s: killing the manager (pid %d): %v", o.name, o.cur.pid(), err)
	}
}

func (o *operator) startAgain(t *testing.T, extraArgs ...string) {
	t.Helper()
	if err := o.start(extraArgs...); err != nil {
		t.Fatalf("operator %s: starting the next manager: %v", o.name, err)
	}
}

// logOnFailure logs the tail of the current manager's log when t fails.
func (o *operator) logOnFailure(t *testing.T) {
	t.Helper()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("last 60 lines of the manager log %s:\n%s", o.cur.logPath, o.cur.tail(60))
		}
	})
}

// logSize returns the size of the running manager's log: where what it logs
// next starts.
func (o *operator) logSize(t *testing.T) int64 {
	t.Helper()
	fi, err := os.Stat(o.cur.logPath)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// logSince returns what the running manager logged past offset.
func (o *operator) logSince(t *testing.T, offset int64) string {
	t.Helper()
	f, err := os.Open(o.cur.logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	if fi, err := f.Stat(); err != nil || fi.Size() < offset {
		t.Fatalf("the manager log %s is shorter than offset %d (%v): it was restarted", o.cur.logPath, offset, err)
	}
	b, err := io.ReadAll(io.NewSectionReader(f, offset, 1<<40))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
