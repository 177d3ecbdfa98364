package admission

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"github.com/open-policy-agent/cert-controller/pkg/rotator"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/rudder-operator/rudder/internal/manager"
	"github.com/rudder-operator/rudder/internal/preview"
)

// Mode says whether and how the API server reaches the webhook.
type Mode string

// The modes of the webhook.
const (
	// Off serves no webhook.
	Off Mode = "off"
	// Service serves it behind a Service (config/webhook): the deployed
	// manager, whose ValidatingWebhookConfiguration config/ installs.
	Service Mode = "service"
	// URL serves it on this host, the configuration naming it by URL
	// (https://localhost:PORT/...), which the manager creates and updates
	// itself: a manager run as a local process next to the API server, as
	// `make run` on the local cluster does.
	URL Mode = "url"
)

// Path is where the webhook is served.
const Path = "/validate-rudder"

// Options configure the webhook. The zero value of every field but Mode
// means its default.
type Options struct {
	// Mode is Off, Service or URL. Default Off.
	Mode Mode
	// Port the webhook is served on. Default 9443.
	Port int
	// Budget bounds the render and dry runs of one admission; a resource
	// whose preview takes longer is allowed with a warning, and the
	// reconciler reports it as before. Default DefaultBudget.
	Budget time.Duration
	// ConfigurationName is the ValidatingWebhookConfiguration's name.
	// Default "rudder".
	ConfigurationName string
	// ServiceName is the webhook's Service in rudder's namespace (Service
	// mode), which the certificate names. Default "rudder-webhook".
	ServiceName string
	// SecretName is the Secret of rudder's namespace holding the CA and
	// the serving certificate, created when missing. Default
	// "rudder-webhook-cert".
	SecretName string
	// CertDir is where the serving certificate is written from the Secret
	// and read by the server. Default: a new temporary directory.
	CertDir string
	// NoCertRotation leaves the Secret's certificate and the configuration's
	// CA bundle to another, such as cert-manager (config/certmanager): the
	// server still reads tls.crt and tls.key from the Secret. Default false:
	// the manager makes, rotates and injects them.
	NoCertRotation bool
}

// DefaultBudget bounds an admission's preview: well above a render and dry
// runs of rudder's charts, and below DefaultTimeout, so that the API server
// gets the warning back rather than giving up on the webhook.
const DefaultBudget = 3 * time.Second

// budgetMargin is what the API server's timeout leaves above the budget for
// the request to come and go.
const budgetMargin = 2 * time.Second

func (o *Options) defaults() {
	if o.Port == 0 {
		o.Port = 9443
	}
	if o.Budget == 0 {
		o.Budget = DefaultBudget
	}
	if o.ConfigurationName == "" {
		o.ConfigurationName = "rudder"
	}
	if o.ServiceName == "" {
		o.ServiceName = "rudder-webhook"
	}
	if o.SecretName == "" {
		o.SecretName = "rudder-webhook-cert"
	}
}

// TimeoutSeconds is the configuration's timeoutSeconds for a budget: the
// budget and a margin, at most the API server's 30.
func TimeoutSeconds(budget time.Duration) int32 {
	return int32(min(30, (budget+budgetMargin+time.Second-1)/time.Second))
}

// ParseMode reads a --webhook flag's value.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case Off, Service, URL:
		return m, nil
	}
	return "", fmt.Errorf("--webhook=%q: want off, service or url", s)
}

// Setup adds the webhook to mgr as opts say, for what mgr serves: its
// server, its certificate's rotator, and in URL mode its configuration.
// It is manager.Options.Webhook.
func (o Options) Setup(mgr ctrl.Manager, served manager.Served) error {
	o.defaults()
	if o.Mode == Off || o.Mode == "" {
		return nil
	}
	if o.Budget < 0 || TimeoutSeconds(o.Budget) >= 30 {
		return fmt.Errorf("webhook budget %s: want more than 0 and less than %s, the API server's longest wait less a margin", o.Budget, 30*time.Second-budgetMargin)
	}
	log := mgr.GetLogger().WithName("admission")
	temporary := o.CertDir == ""
	if temporary {
		dir, err := os.MkdirTemp("", "rudder-webhook-")
		if err != nil {
			return fmt.Errorf("making the webhook's certificate directory: %w", err)
		}
		o.CertDir = dir
	}
	c, err := client.New(served.Config, client.Options{Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper()})
	if err != nil {
		return err
	}
	ctx := context.Background()
	secret := types.NamespacedName{Namespace: served.Namespace, Name: o.SecretName}
	dnsName := o.ServiceName + "." + served.Namespace + ".svc"
	if o.Mode == URL {
		dnsName = "localhost"
		vwc, err := Configuration(o.ConfigurationName, fmt.Sprintf("https://localhost:%d%s", o.Port, Path), served, mgr.GetRESTMapper(), o.Budget)
		if err != nil {
			return err
		}
		if err := applyConfiguration(ctx, c, vwc); err != nil {
			return err
		}
		log.Info("Serving the admission webhook by URL", "configuration", o.ConfigurationName, "url", vwc.Webhooks[0].ClientConfig.URL)
	}
	if err := o.rotate(ctx, mgr, c, secret, dnsName); err != nil {
		return err
	}
	certs := &certFiles{Reader: mgr.GetAPIReader(), Secret: secret, Dir: o.CertDir, Temporary: temporary, Log: log}
	if err := mgr.Add(certs); err != nil {
		return err
	}
	p, err := preview.New(preview.Options{Config: served.Config, Watches: served.Watches, DefaultServiceAccount: served.DefaultServiceAccount,
		Signatures: served.Signatures})
	if err != nil {
		return fmt.Errorf("preparing the webhook's previews: %w", err)
	}
	host := "" // every interface: the Service reaches the pod's
	if o.Mode == URL {
		host = "localhost"
	}
	// The server starts before the rotator has made the certificate: it
	// takes it from certs, which answers a handshake before then with an error.
	srv := webhook.NewServer(webhook.Options{Host: host, Port: o.Port,
		TLSOpts: []func(*tls.Config){func(c *tls.Config) { c.GetCertificate = certs.GetCertificate }}})
	srv.Register(Path, &admission.Webhook{Handler: &Handler{Preview: p, Budget: o.Budget, Log: log, Serves: serves(served)}})
	if err := mgr.Add(srv); err != nil {
		return err
	}
	log.Info("Checking created and updated custom resources at admission", "mode", o.Mode, "port", o.Port, "budget", o.Budget)
	return nil
}

// rotate has the manager make the certificate's CA and the certificate for
// dnsName, keep them in secret, renew them and inject the CA into the
// configuration, unless NoCertRotation says another does.
func (o Options) rotate(ctx context.Context, mgr ctrl.Manager, c client.Client, secret types.NamespacedName, dnsName string) error {
	if o.NoCertRotation {
		return nil
	}
	if err := ensureSecret(ctx, c, secret); err != nil {
		return err
	}
	if err := rotator.AddRotator(mgr, &rotator.CertRotator{
		SecretKey:      secret,
		CertDir:        o.CertDir,
		CAName:         "rudder-webhook-ca",
		CAOrganization: "rudder",
		DNSName:        dnsName,
		IsReady:        make(chan struct{}),
		Webhooks:       []rotator.WebhookInfo{{Name: o.ConfigurationName, Type: rotator.Validating}},
		FieldOwner:     "rudder",
	}); err != nil {
		return fmt.Errorf("adding the webhook certificate's rotator: %w", err)
	}
	return nil
}

// serves says whether a resource is one the manager serves: in its
// namespaces, selected by its label selector.
func serves(s manager.Served) func(*unstructured.Unstructured) bool {
	ns := map[string]bool{}
	for _, n := range s.Namespaces {
		ns[n] = true
	}
	return func(obj *unstructured.Unstructured) bool {
		if len(ns) > 0 && !ns[obj.GetNamespace()] {
			return false
		}
		return s.Selector == nil || s.Selector.Matches(labels.Set(obj.GetLabels()))
	}
}

// ensureSecret creates the certificate's Secret, empty, when missing: the
// rotator fills it but does not create it.
func ensureSecret(ctx context.Context, c client.Client, key types.NamespacedName) error {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name,
		Labels: map[string]string{"app.kubernetes.io/name": "rudder", "app.kubernetes.io/component": "webhook"}}}
	err := c.Create(ctx, s)
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating the webhook certificate's Secret %s: %w", key, err)
	}
	return nil
}

// certFiles keeps the serving certificate and key of the Secret, for the
// server's handshakes, and writes them into Dir, which the rotator waits
// for, whenever they change. It replaces mounting the Secret as a volume,
// which the kubelet refreshes only after a minute or more, and which a local
// process has not.
type certFiles struct {
	Reader client.Reader
	Secret types.NamespacedName
	Dir    string
	// Temporary removes Dir when the manager stops.
	Temporary bool
	Log       logr.Logger

	cert atomic.Pointer[tls.Certificate]
}

// GetCertificate is the server's tls.Config.GetCertificate.
func (f *certFiles) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	if c := f.cert.Load(); c != nil {
		return c, nil
	}
	return nil, errors.New("the webhook's serving certificate is not made yet")
}

// NeedLeaderElection implements manager.LeaderElectionRunnable: every
// replica serves the webhook.
func (*certFiles) NeedLeaderElection() bool { return false }

// Start implements manager.Runnable.
func (f *certFiles) Start(ctx context.Context) error {
	var last string
	for {
		wait := time.Second // until the rotator has made the first
		s := &corev1.Secret{}
		err := f.Reader.Get(ctx, f.Secret, s)
		if err != nil && !errors.Is(err, context.Canceled) {
			f.Log.Error(err, "Reading the webhook certificate's Secret", "secret", f.Secret)
		}
		crt, key := s.Data[corev1.TLSCertKey], s.Data[corev1.TLSPrivateKeyKey]
		if len(crt) > 0 && len(key) > 0 {
			wait = 30 * time.Second
			if string(crt)+string(key) != last {
				pair, err := tls.X509KeyPair(crt, key)
				if err == nil {
					f.cert.Store(&pair)
					err = f.write(crt, key)
				}
				if err != nil {
					f.Log.Error(err, "Writing the webhook certificate", "dir", f.Dir)
				} else {
					last = string(crt) + string(key)
				}
			}
		}
		select {
		case <-ctx.Done():
			if f.Temporary {
				_ = os.RemoveAll(f.Dir)
			}
			return nil
		case <-time.After(wait):
		}
	}
}

// write writes the key before the certificate, each by rename, so that the
// server never pairs a new certificate with an old key for long.
func (f *certFiles) write(crt, key []byte) error {
	for _, file := range []struct {
		name string
		data []byte
	}{{corev1.TLSPrivateKeyKey, key}, {corev1.TLSCertKey, crt}} {
		tmp := f.Dir + "/." + file.name
		if err := os.WriteFile(tmp, file.data, 0o600); err != nil {
			return err
		}
		if err := os.Rename(tmp, f.Dir+"/"+file.name); err != nil {
			return err
		}
	}
	return nil
}
