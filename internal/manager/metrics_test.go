package manager_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	"github.com/rudder-operator/rudder/internal/manager"
	"github.com/rudder-operator/rudder/test/testenv"
)

// TestManagerBinary_AuthorizesMetrics runs the manager binary with its
// default metrics flags against a real API server: /metrics answers over
// HTTPS only a bearer token the API server authenticates and authorizes
// through the metrics reader ClusterRole of config/rbac, with a self-signed
// certificate or the one --metrics-cert-path gives.
func TestManagerBinary_AuthorizesMetrics(t *testing.T) {
	env, cfg, err := testenv.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	reader, stranger := metricsReader(t, cs)
	certDir, roots := servingCert(t)
	bin := buildManager(t)
	selfSigned := startMetrics(t, bin, env)
	given := startMetrics(t, bin, env, "--metrics-cert-path="+certDir)

	// The self-signed certificate is not verified, as the ServiceMonitor of
	// config/prometheus does not.
	skipVerify := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true},
	}}
	verify := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12},
	}}
	// The API server's RBAC sees the new binding a moment after it was
	// created, and controller-runtime's series appear once the controllers
	// start: wait for both before telling answers apart.
	for _, addr := range []string{selfSigned.addr, given.addr} {
		waitMetrics(t, skipVerify, "https://"+addr+"/metrics", reader, reconcileSeries, selfSigned.exited, given.exited)
	}

	tests := []struct {
		name     string
		client   *http.Client
		url      string
		token    string
		want     int // 0: no answer, or 400
		wantBody string
	}{
		{name: "no token", client: skipVerify, url: "https://" + selfSigned.addr + "/metrics", want: http.StatusUnauthorized},
		// controller-runtime's filter answers 500 when the TokenReview
		// reports an error, as the API server's does for a token no
		// authenticator of it accepts.
		{name: "a token the API server does not know", client: skipVerify, url: "https://" + selfSigned.addr + "/metrics",
			token: "not-a-token", want: http.StatusInternalServerError, wantBody: "Authentication failed"},
		{name: "a ServiceAccount without the reader role", client: skipVerify, url: "https://" + selfSigned.addr + "/metrics",
			token: stranger, want: http.StatusForbidden},
		{name: "the ServiceAccount bound to the reader role", client: skipVerify, url: "https://" + selfSigned.addr + "/metrics",
			token: reader, want: http.StatusOK, wantBody: reconcileSeries},
		{name: "plain HTTP", client: skipVerify, url: "http://" + selfSigned.addr + "/metrics", token: reader},
		{name: "the certificate of --metrics-cert-path, verified", client: verify, url: "https://" + given.addr + "/metrics",
			token: reader, want: http.StatusOK, wantBody: reconcileSeries},
		{name: "the certificate of --metrics-cert-path, no token", client: verify, url: "https://" + given.addr + "/metrics",
			want: http.StatusUnauthorized},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body, err := getMetrics(tt.client, tt.url, tt.token)
			if tt.want == 0 {
				// Go's TLS server answers a plain request 400 or resets it.
				if err == nil && status != http.StatusBadRequest {
					t.Errorf("GET %s: status %d, want no answer or 400; body:\n%.300s", tt.url, status, body)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if status != tt.want {
				t.Errorf("GET %s: status %d, want %d; body:\n%.300s", tt.url, status, tt.want, body)
			}
			if !strings.Contains(body, tt.wantBody) {
				t.Errorf("GET %s: body does not contain %q:\n%.300s", tt.url, tt.wantBody, body)
			}
		})
	}
}

func TestNew_RefusesMetricsCertPath(t *testing.T) {
	tests := []struct {
		name  string
		files []string // written into the directory
	}{
		{name: "no files"},
		{name: "no key", files: []string{"tls.crt"}},
		{name: "no certificate", files: []string{"tls.key"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, f := range tt.files {
				if err := os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			// Refused before the manager reaches the cluster.
			_, err := manager.New(manager.Options{MetricsCertDir: dir, Config: &rest.Config{Host: "https://127.0.0.1:1"}}, logr.Discard())
			if err == nil {
				t.Fatal("manager built with a --metrics-cert-path missing files")
			}
			for _, want := range []string{"--metrics-cert-path", dir, "tls.crt", "tls.key"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not mention %q", err, want)
				}
			}
		})
	}
}

// metricsReader binds config/rbac's metrics reader ClusterRole to a new
// ServiceAccount, and returns its token and the token of another
// ServiceAccount bound to nothing.
func metricsReader(t *testing.T, cs kubernetes.Interface) (reader, stranger string) {
	t.Helper()
	ctx := context.Background()
	root, err := testenv.Root()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, "config", "rbac", "metrics_reader_role.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	role := &rbacv1.ClusterRole{}
	if err := yaml.UnmarshalStrict(b, role); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	const ns = "default"
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "prometheus-metrics-reader"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: "prometheus"}},
	}
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	token := func(name string) string {
		sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		if _, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, sa, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name, &authenticationv1.TokenRequest{
			Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return tr.Status.Token
	}
	return token("prometheus"), token("stranger")
}

// servingCert writes a certificate for 127.0.0.1 and its key into a new
// directory, as --metrics-cert-path wants them, and returns the directory and
// a pool holding the certificate's CA.
func servingCert(t *testing.T) (string, *x509.CertPool) {
	t.Helper()
	cert, key, err := certutil.GenerateSelfSignedCertKey("localhost", []net.IP{net.IPv4(127, 0, 0, 1)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for name, data := range map[string][]byte{"tls.crt": cert, "tls.key": key} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(cert) {
		t.Fatal("no certificate in the generated PEM")
	}
	return dir, roots
}

// metricsProcess is a manager binary serving metrics on addr.
type metricsProcess struct {
	addr   string
	exited <-chan error
}

// startMetrics runs bin against env with its metrics on a free loopback
// port, and args, until the test ends.
func startMetrics(t *testing.T, bin string, env *envtest.Environment, args ...string) metricsProcess {
	t.Helper()
	addr := freeAddr(t)
	var out bytes.Buffer
	cmd := exec.Command(bin, append([]string{"--health-probe-bind-address=0", "--metrics-bind-address=" + addr, "--log-format=console"}, args...)...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+adminKubeconfig(t, env))
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-exited:
			t.Logf("manager exited: %v", err)
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
		}
		if t.Failed() {
			t.Logf("manager %v:\n%s", args, out.String())
		}
	})
	return metricsProcess{addr: addr, exited: exited}
}

// reconcileSeries is a series of controller-runtime's, served once the
// manager's controllers have started.
const reconcileSeries = "controller_runtime_reconcile_total"

// waitMetrics waits until url answers token with 200 and a body containing
// want, failing early if a manager exits.
func waitMetrics(t *testing.T, c *http.Client, url, token, want string, exited ...<-chan error) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	var last string
	for time.Now().Before(deadline) {
		for _, e := range exited {
			select {
			case err := <-e:
				t.Fatalf("a manager exited before %s answered: %v", url, err)
			default:
			}
		}
		status, body, err := getMetrics(c, url, token)
		if err == nil && status == http.StatusOK && strings.Contains(body, want) {
			return
		}
		last = fmt.Sprintf("status %d, error %v: %.200s", status, err, body)
		time.Sleep(500 * time.Millisecond)
	}
	t.Fatalf("%s: %s", url, last)
}

// getMetrics GETs url with token as its bearer token, if any.
func getMetrics(c *http.Client, url, token string) (int, string, error) {
	req, err := http.NewRequest(http.MethodGet, url, http.NoBody)
	if err != nil {
		return 0, "", err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), err
}
