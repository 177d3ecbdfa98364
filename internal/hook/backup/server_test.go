package backup

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rudder-operator/rudder/test/testenv"
)

// pgBin is where the machine's PostgreSQL server and client programs are
// (findPGBin); the scripts find the clients through PATH, as in the official
// image.
var pgBin = findPGBin()

// findPGBin returns the bin directory of the newest PostgreSQL major version
// Debian's packages installed (/usr/lib/postgresql/<major>/bin), else the
// directory of the initdb on PATH; "" when there is none.
func findPGBin() string {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	best, bestMajor := "", -1
	for _, d := range dirs {
		major, err := strconv.Atoi(filepath.Base(filepath.Dir(d)))
		if err != nil || major <= bestMajor {
			continue
		}
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			best, bestMajor = d, major
		}
	}
	if best != "" {
		return best
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p)
	}
	return ""
}

// server is a private PostgreSQL server on a loopback port with password
// (SCRAM) authentication, shared by the tests of this package.
type server struct {
	port     string
	root     string // owned by the server's user: data/, the socket, the log
	password string // the superuser "postgres"'s
	cmd      *exec.Cmd
	exited   chan struct{}
}

var (
	srv    *server
	srvErr error

	secretsMu sync.Mutex
	secrets   []string // every password a test used; no script output may show one
)

func TestMain(m *testing.M) {
	if testenv.FuzzOnly() {
		os.Exit(m.Run()) // the fuzz targets read specs: they need no server
	}
	srv, srvErr = startServer()
	code := m.Run()
	if srv != nil {
		srv.stop()
	}
	stopKube()
	os.Exit(code)
}

// pg returns the shared server, failing t if it could not start.
func pg(t *testing.T) *server {
	t.Helper()
	if srvErr != nil {
		t.Fatalf("the scripts run against a real PostgreSQL server, which did not start: %v", srvErr)
	}
	return srv
}

func startServer() (*server, error) {
	for _, p := range []string{"initdb", "postgres", "pg_isready", "psql", "pg_dump", "pg_restore"} {
		if _, err := os.Stat(filepath.Join(pgBin, p)); err != nil {
			return nil, fmt.Errorf("PostgreSQL's %s not found (looked in /usr/lib/postgresql/*/bin and PATH): install PostgreSQL (apt-get install postgresql)", p)
		}
	}
	// initdb and postgres refuse to run as root: as root, run them as the
	// postgres user the package creates, directly (no runuser) so the kernel
	// can stop the server should this test binary die without cleaning up.
	var cred *syscall.Credential
	uid, gid := -1, -1
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return nil, fmt.Errorf("running as root needs the postgres user (apt-get install postgresql): %w", err)
		}
		uid, _ = strconv.Atoi(u.Uid)
		gid, _ = strconv.Atoi(u.Gid)
		cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}
	}
	root, err := os.MkdirTemp("", "rudder-pg-")
	if err != nil {
		return nil, err
	}
	s := &server{root: root, password: randomSecret("super")}
	ok := false
	defer func() {
		if !ok {
			_ = os.RemoveAll(root)
		}
	}()
	pwfile := filepath.Join(root, "pwfile")
	if err := os.WriteFile(pwfile, []byte(s.password+"\n"), 0o600); err != nil {
		return nil, err
	}
	if cred != nil {
		for _, p := range []string{root, pwfile} {
			if err := os.Chown(p, uid, gid); err != nil {
				return nil, err
			}
		}
	}
	initdb := exec.Command(filepath.Join(pgBin, "initdb"), "--pgdata="+filepath.Join(root, "data"),
		"--username=postgres", "--auth=scram-sha-256", "--pwfile="+pwfile,
		"--encoding=UTF8", "--locale=C", "--no-sync")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := initdb.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("initdb: %w\n%s", err, out)
	}
	// A free port can be taken between choosing and binding it: try again.
	for range 3 {
		if err = s.start(cred); err == nil {
			ok = true
			return s, nil
		}
	}
	return nil, err
}

func (s *server) start(cred *syscall.Credential) error {
	port, err := freePort()
	if err != nil {
		return err
	}
	logPath := filepath.Join(s.root, "postgres.log")
	log, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer func() { _ = log.Close() }() // the server holds its own descriptor
	cmd := exec.Command(filepath.Join(pgBin, "postgres"), "-D", filepath.Join(s.root, "data"),
		"-p", port, "-k", s.root, "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off")
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGQUIT}
	if err := cmd.Start(); err != nil {
		return err
	}
	s.port, s.cmd, s.exited = port, cmd, make(chan struct{})
	go func() { _ = cmd.Wait(); close(s.exited) }()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); {
		select {
		case <-s.exited:
			b, _ := os.ReadFile(logPath)
			return fmt.Errorf("postgres exited on start:\n%s", b)
		default:
		}
		if exec.Command(filepath.Join(pgBin, "pg_isready"), "-q", "-h", "127.0.0.1", "-p", port).Run() == nil {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	s.stop()
	b, _ := os.ReadFile(logPath)
	return fmt.Errorf("postgres did not accept connections within 30s:\n%s", b)
}

// stop shuts the server down fast (SIGINT), killing it if it hangs, and
// removes its files.
func (s *server) stop() {
	_ = s.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-s.exited:
	case <-time.After(30 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.exited
	}
	_ = os.RemoveAll(s.root)
}

func freePort() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	return port, l.Close()
}

// randomSecret returns a new password and remembers it, so that runScript can
// check no script output shows it.
func randomSecret(what string) string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	p := what + "-pw-" + hex.EncodeToString(b)
	secretsMu.Lock()
	secrets = append(secrets, p)
	secretsMu.Unlock()
	return p
}

// creds are what a Database's credentials Secret holds.
type creds struct {
	user, password, database string
}

// newDatabase creates a role name with a new password and a database name it
// owns, dropped when t ends: what a new Database gets.
func (s *server) newDatabase(t *testing.T, name string) creds {
	t.Helper()
	c := creds{user: name, password: randomSecret(name), database: name}
	s.admin(t, "postgres", fmt.Sprintf(`CREATE ROLE %q LOGIN PASSWORD '%s'`, name, c.password))
	s.admin(t, "postgres", fmt.Sprintf(`CREATE DATABASE %q OWNER %q`, name, name))
	t.Cleanup(func() {
		s.admin(t, "postgres", fmt.Sprintf(`DROP DATABASE %q WITH (FORCE)`, name))
		s.admin(t, "postgres", fmt.Sprintf(`DROP ROLE %q`, name))
	})
	return c
}

// admin runs sql as the superuser in database db.
func (s *server) admin(t *testing.T, db, sql string) string {
	t.Helper()
	return s.psql(t, creds{user: "postgres", password: s.password, database: db}, sql)
}

// psql runs sql as c and returns the unaligned, tuples-only output.
func (s *server) psql(t *testing.T, c creds, sql string) string {
	t.Helper()
	cmd := exec.Command(filepath.Join(pgBin, "psql"), "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-c", sql)
	cmd.Env = envList(s.env(c))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("psql %q as %s: %v\n%s", sql, c.user, err, out)
	}
	return strings.TrimSpace(string(out))
}

// env is the environment of a script connecting as c: the libpq variables a
// CronJob sets from the credentials Secret.
func (s *server) env(c creds) map[string]string {
	return map[string]string{
		"PATH":              pgBin + ":/usr/local/bin:/usr/bin:/bin",
		"HOME":              s.root, // no ~/.pgpass of whoever runs the tests
		"PGHOST":            "127.0.0.1",
		"PGPORT":            s.port,
		"PGUSER":            c.user,
		"PGPASSWORD":        c.password,
		"PGDATABASE":        c.database,
		"PGCONNECT_TIMEOUT": "10",
	}
}

func envList(m map[string]string) []string {
	l := make([]string, 0, len(m))
	for k, v := range m {
		l = append(l, k+"="+v)
	}
	return l
}

// runScript runs script exactly as the container does, /bin/sh -c with env
// only, and returns its combined output and exit error. It fails t if the
// output shows any password.
func runScript(t *testing.T, script string, env map[string]string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", script)
	cmd.Env = envList(env)
	b, err := cmd.CombinedOutput()
	out := string(b)
	t.Logf("%s", out)
	secretsMu.Lock()
	defer secretsMu.Unlock()
	for _, p := range secrets {
		if strings.Contains(out, p) {
			t.Errorf("script output shows a password:\n%s", out)
		}
	}
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("running the script: %v", err)
	}
	return out, err
}
