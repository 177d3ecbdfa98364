package helm

import (
	"context"
	"fmt"
	"maps"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage/driver"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/metadata"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// decodes counts the stored revisions decoded (base64, gunzip, JSON) by Helm's
// driver: the main cost of a release's storage.
var decodes = prometheus.NewCounter(prometheus.CounterOpts{
	Name: "rudder_release_decodes_total",
	Help: "Stored Helm release revisions decoded from their storage Secrets.",
})

func init() {
	metrics.Registry.MustRegister(decodes)
}

// secretsDriver is Helm's own Secrets driver, which alone encodes, decodes
// and labels revisions, over conditionalSecrets, whose updates carry the
// resourceVersion the revision was read at. Three methods are rudder's: Get,
// which decodes through Helm's Query, so that a Secret that does not decode
// is an error naming it where Helm's Get panics; Delete, which neither reads
// nor decodes what it deletes and counts a revision already gone as deleted;
// and QueryLean (lean.go), which decodes only the revisions Helm's upgrade
// and uninstall read whole.
type secretsDriver struct {
	*driver.Secrets
	secrets conditionalSecrets
	meta    metadata.ResourceInterface // the namespace's Secrets, metadata only
}

// newSecretsDriver returns the storage driver of the Secrets of one
// namespace: secrets reads and writes them, meta lists their metadata.
func newSecretsDriver(secrets corev1client.SecretInterface, meta metadata.ResourceInterface) secretsDriver {
	checked := conditionalSecrets{SecretInterface: secrets, read: &readVersions{}}
	return secretsDriver{Secrets: driver.NewSecrets(checked), secrets: checked, meta: meta}
}

// Get reads one revision as Helm's Get does (its labels without Helm's own),
// but decoded by Helm's Query over the one Secret read: Helm's Get
// dereferences the nil release a failed decode gives, and panics, where its
// Query leaves the Secret out. A Secret that does not decode is an error
// wrapping ErrUndecodable and naming the Secret.
func (d secretsDriver) Get(key string) (*release.Release, error) {
	obj, err := d.secrets.Get(context.Background(), key, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, driver.ErrReleaseNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("get: failed to get %q: %w", key, err)
	}
	rls, err := decoded(obj)
	if err != nil {
		return nil, err
	}
	labels := make(map[string]string, len(rls.Labels))
	maps.Copy(labels, rls.Labels)
	for _, k := range driver.GetSystemLabels() {
		delete(labels, k)
	}
	rls.Labels = labels
	return rls, nil
}

// decoded returns the release storage Secret s holds, decoded by Helm's
// driver, or an error wrapping ErrUndecodable that names s.
func decoded(s *corev1.Secret) (*release.Release, error) {
	decodes.Inc()
	rels, err := driver.NewSecrets(listed{secret: s}).Query(map[string]string{})
	if err != nil || len(rels) == 0 {
		return nil, fmt.Errorf("%w: storage Secret %s", ErrUndecodable, s.Name)
	}
	return rels[0], nil
}

// listed is a Secret client whose List returns one Secret already read, for
// Helm's Query to decode it. It serves nothing else.
type listed struct {
	corev1client.SecretInterface
	secret *corev1.Secret
}

func (l listed) List(context.Context, metav1.ListOptions) (*corev1.SecretList, error) {
	return &corev1.SecretList{Items: []corev1.Secret{*l.secret}}, nil
}

// Delete removes a stored revision. Unlike Helm's driver it does not read
// and decode the revision first (Helm's uninstall and history pruning, its
// only callers, drop what it returns), and a revision already gone counts
// as deleted: a namespace being deleted takes the Secrets along, and the
// uninstall of a release there must not fail for it.
func (d secretsDriver) Delete(key string) (*release.Release, error) {
	err := d.secrets.Delete(context.Background(), key, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("delete: failed to delete: %w", err)
	}
	return nil, nil
}

// conditionalSecrets is the Secret client Helm's Secrets driver stores releases
// through. Its Update carries the resourceVersion at which the Secret was
// last read or written through this client, so that it fails with the API
// server's Conflict when another writer (the helm CLI) changed the revision
// since, where Helm's driver would overwrite it. A revision not read through
// this client is replaced unconditionally, as Helm's driver replaces it.
type conditionalSecrets struct {
	corev1client.SecretInterface
	read *readVersions
}

func (s conditionalSecrets) Get(ctx context.Context, name string, opts metav1.GetOptions) (*corev1.Secret, error) {
	obj, err := s.SecretInterface.Get(ctx, name, opts)
	if err == nil {
		s.read.set(name, obj.ResourceVersion)
	}
	return obj, err
}

func (s conditionalSecrets) List(ctx context.Context, opts metav1.ListOptions) (*corev1.SecretList, error) {
	list, err := s.SecretInterface.List(ctx, opts)
	if err != nil {
		return nil, err
	}
	decodes.Add(float64(len(list.Items))) // Helm's driver decodes each
	for i := range list.Items {
		s.read.set(list.Items[i].Name, list.Items[i].ResourceVersion)
	}
	return list, nil
}

func (s conditionalSecrets) Create(ctx context.Context, obj *corev1.Secret, opts metav1.CreateOptions) (*corev1.Secret, error) {
	created, err := s.SecretInterface.Create(ctx, obj, opts)
	if err == nil {
		s.read.set(created.Name, created.ResourceVersion)
	}
	return created, err
}

func (s conditionalSecrets) Update(ctx context.Context, obj *corev1.Secret, opts metav1.UpdateOptions) (*corev1.Secret, error) {
	if obj.ResourceVersion == "" {
		obj.ResourceVersion = s.read.of(obj.Name)
	}
	updated, err := s.SecretInterface.Update(ctx, obj, opts)
	if err == nil {
		s.read.set(updated.Name, updated.ResourceVersion)
	}
	return updated, err
}

func (s conditionalSecrets) Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error {
	s.read.forget(name)
	return s.SecretInterface.Delete(ctx, name, opts)
}

// readVersions holds, by Secret name, the resourceVersion of a storage
// Secret as a driver last read or wrote it. A driver lives as long as one
// Helm client (one reconcile), so it holds the revisions of one action or a
// few: Helm's upgrade reads the deployed revision and then updates it to
// superseded; rudder's Label and Unlock read a revision and update it. Helm's
// actions may write from a goroutine of their own, hence the lock.
type readVersions struct {
	mu     sync.Mutex
	byName map[string]string
}

// set records that the Secret name was read or written at resourceVersion rv.
func (r *readVersions) set(name, rv string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.byName == nil {
		r.byName = map[string]string{}
	}
	r.byName[name] = rv
}

// of returns the resourceVersion name was last read or written at; "" when
// it was not.
func (r *readVersions) of(name string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.byName[name]
}

func (r *readVersions) forget(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.byName, name)
}

// unstored is a storage driver that knows release name has no stored
// revision: its history query is answered without a request. Everything else,
// the revision's Create included, goes to the driver.
type unstored struct {
	driver.Driver
	name string
}

func (u unstored) Query(labels map[string]string) ([]*release.Release, error) {
	if labels["name"] == u.name && labels["owner"] == "helm" && len(labels) == 2 {
		return nil, driver.ErrReleaseNotFound
	}
	return u.Driver.Query(labels)
}

// markingUninstall is a storage driver that merges labels into the revision
// Helm's uninstall marks uninstalling, in that same write.
type markingUninstall struct {
	driver.Driver
	labels map[string]string
}

func (m markingUninstall) Update(key string, rls *release.Release) error {
	if rls.Info != nil && rls.Info.Status == release.StatusUninstalling {
		merged := maps.Clone(rls.Labels)
		if merged == nil {
			merged = make(map[string]string, len(m.labels))
		}
		maps.Copy(merged, m.labels)
		rls.Labels = merged
	}
	return m.Driver.Update(key, rls)
}
