//go:build e2e

package e2e

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// errNotReady is the answer of a manager whose /readyz is not 200 yet.
var errNotReady = errors.New("not ready")

// manager is the rudder binary under test, running as a subprocess with its
// output in a file.
type manager struct {
	cmd       *exec.Cmd
	logPath   string
	probeAddr string
	// metricsAddr serves /metrics on loopback: HTTPS, to a token the API
	// server authorizes (the default flags; scrape).
	metricsAddr string

	exited  chan struct{} // closed once the process has exited
	waitErr error         // cmd.Wait's result, set before exited is closed
}

// startManager starts bin with free local probe and metrics ports and
// console logs into logPath; env is added to its environment (such as
// WATCH_NAMESPACE) and extraArgs to its flags (such as --watches-file).
func startManager(bin, logPath string, env []string, extraArgs ...string) (*manager, error) {
	addr, err := freeLocalAddr()
	if err != nil {
		return nil, fmt.Errorf("finding a free port for the health probes: %w", err)
	}
	metricsAddr, err := freeLocalAddr()
	if err != nil {
		return nil, fmt.Errorf("finding a free port for the metrics: %w", err)
	}
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	m := &manager{logPath: logPath, probeAddr: addr, metricsAddr: metricsAddr, exited: make(chan struct{})}
	m.cmd = exec.Command(bin, append([]string{
		"--metrics-bind-address=" + metricsAddr,
		"--health-probe-bind-address=" + addr,
		"--log-format=console",
		"--log-level=debug",
		// A killed manager's pending operations are unlocked 5 s after its
		// death, not 15: the crash test kills it twenty times.
		"--holder-lease-duration=5s",
	}, extraArgs...)...)
	m.cmd.Dir = root
	m.cmd.Env = append(os.Environ(), env...)
	m.cmd.Stdout, m.cmd.Stderr = logFile, logFile
	setParentDeathSignal(m.cmd)

	// The parent-death signal fires when the thread that started the process
	// exits, so that thread stays locked to this goroutine while the process
	// lives: a test binary killed by `go test -timeout` takes the manager along.
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		if err := m.cmd.Start(); err != nil {
			started <- err
			runtime.UnlockOSThread()
			return
		}
		started <- nil
		m.waitErr = m.cmd.Wait()
		_ = logFile.Close()
		close(m.exited)
	}()
	if err := <-started; err != nil {
		_ = logFile.Close()
		return nil, fmt.Errorf("starting %s: %w", bin, err)
	}
	return m, nil
}

func (m *manager) pid() int { return m.cmd.Process.Pid }

func (m *manager) readyURL() string { return "http://" + m.probeAddr + "/readyz" }

// waitReady waits until /readyz answers 200, failing early when the process
// exits.
func (m *manager) waitReady(timeout time.Duration) error {
	client := &http.Client{Timeout: 5 * time.Second}
	deadline := time.Now().Add(timeout)
	last := errNotReady
	for time.Now().Before(deadline) {
		select {
		case <-m.exited:
			return fmt.Errorf("the manager exited before it was ready (%s); the end of its log %s:\n%s", describeExit(m.waitErr), m.logPath, m.tail(10))
		default:
		}
		resp, err := client.Get(m.readyURL())
		if err == nil {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("%w: status %d: %s", errNotReady, resp.StatusCode, strings.TrimSpace(string(body)))
		}
		last = err
		time.Sleep(500 * time.Millisecond)
	}
	return fmt.Errorf("expected %s to answer 200 within %s; last answer: %w", m.readyURL(), timeout, last)
}

// stop sends SIGTERM and waits for the process to exit. It returns an error
// unless the process exits with code 0 within timeout; a process still running
// then is killed.
func (m *manager) stop(timeout time.Duration) error {
	select {
	case <-m.exited:
		return fmt.Errorf("the manager had already exited before SIGTERM was sent: %v", describeExit(m.waitErr))
	default:
	}
	if err := m.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return fmt.Errorf("sending SIGTERM: %w", err)
	}
	start := time.Now()
	select {
	case <-m.exited:
		if m.waitErr != nil {
			return fmt.Errorf("saw %v after %s", describeExit(m.waitErr), time.Since(start).Round(time.Millisecond))
		}
		fmt.Fprintf(os.Stderr, "e2e: the manager exited with code 0, %s after SIGTERM\n", time.Since(start).Round(time.Millisecond))
		return nil
	case <-time.After(timeout):
		_ = m.cmd.Process.Kill()
		<-m.exited
		return fmt.Errorf("saw it still running after %s; killed it", timeout)
	}
}

func describeExit(err error) string {
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.String()
	}
	if err == nil {
		return "exit code 0"
	}
	return err.Error()
}

// tail returns the last n lines of the manager's log.
func (m *manager) tail(n int) string {
	f, err := os.Open(m.logPath)
	if err != nil {
		return fmt.Sprintf("(cannot read %s: %v)", m.logPath, err)
	}
	defer func() { _ = f.Close() }()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if len(lines) > n {
			lines = lines[1:]
		}
	}
	return strings.Join(lines, "\n")
}

func (m *manager) printTail(w io.Writer, n int) {
	_, _ = fmt.Fprintf(w, "----- last %d lines of the manager log %s -----\n%s\n----- end of the manager log -----\n", n, m.logPath, m.tail(n))
}

// logManagerOnFailure logs the tail of the shared manager's log when t fails.
func logManagerOnFailure(t *testing.T) {
	t.Helper()
	shared.logOnFailure(t)
}

// Managers listen on ports of [firstManagerPort, lastManagerPort], below the
// kernel's ephemeral range (net.ipv4.ip_local_port_range, 32768 and up by
// default) and above the local cluster's own ports (hack/cluster-up.sh, at
// most 23800). A port picked by listening on :0 comes from that range, and
// between its close and the manager's bind any outgoing connection (the
// suite's kubectl and helm calls, the managers' own) may take it: the manager
// then exits on "address already in use".
const (
	firstManagerPort = 24000
	lastManagerPort  = 31999
)

// portsTried counts the ports of the range freeLocalAddr has tried: no port
// is handed out twice in a run, so a killed manager's never meets its successor.
var portsTried atomic.Int32

// freeLocalAddr returns a 127.0.0.1 address of a port of the managers' range
// that no process listened on a moment ago and that this run has not handed
// out before.
func freeLocalAddr() (string, error) {
	for {
		port := firstManagerPort + portsTried.Add(1) - 1
		if port > lastManagerPort {
			return "", fmt.Errorf("every port of %d-%d is taken or was handed out", firstManagerPort, lastManagerPort)
		}
		addr := fmt.Sprintf("127.0.0.1:%d", port)
		l, err := net.Listen("tcp", addr)
		if err != nil {
			continue // another process's
		}
		_ = l.Close()
		return addr, nil
	}
}

// kill sends SIGKILL, the crash no handler sees, and waits for the exit.
func (m *manager) kill() error {
	if err := m.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		return fmt.Errorf("sending SIGKILL: %w", err)
	}
	select {
	case <-m.exited:
		return nil
	case <-time.After(shutdownTimeout):
		return fmt.Errorf("pid %d still running %s after SIGKILL", m.pid(), shutdownTimeout)
	}
}
