package helm

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	ri "helm.sh/helm/v4/pkg/release"
	rcommon "helm.sh/helm/v4/pkg/release/common"
	release "helm.sh/helm/v4/pkg/release/v1"
	"helm.sh/helm/v4/pkg/storage/driver"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
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

// newSecretsDriver returns Helm's own Secrets driver over the Secrets of one
// namespace, through conditionalSecrets (the lock's optimistic writes).
func newSecretsDriver(secrets corev1client.SecretInterface) *driver.Secrets {
	return newSecretsDriverReading(secrets, &readVersions{})
}

// newSecretsDriverReading is newSecretsDriver recording what it reads and
// writes in read, which its caller may read and prime too.
func newSecretsDriverReading(secrets corev1client.SecretInterface, read *readVersions) *driver.Secrets {
	return driver.NewSecrets(conditionalSecrets{SecretInterface: secrets, read: read})
}

// get reads revision key through d, as Helm's Get does, and names a storage
// Secret that does not decode: an error wrapping ErrUndecodable.
func get(d driver.Driver, key string) (*release.Release, error) {
	r, err := d.Get(key)
	if err != nil {
		if errors.Is(err, driver.ErrReleaseNotFound) || !undecodable(err) {
			return nil, err
		}
		return nil, fmt.Errorf("%w: storage Secret %s", ErrUndecodable, key)
	}
	rel, ok := r.(*release.Release)
	if !ok || rel == nil {
		return nil, fmt.Errorf("%w: storage Secret %s", ErrUndecodable, key)
	}
	return rel, nil
}

// undecodable reports whether err, from Helm's Secrets driver's Get, is its
// failure to decode what the Secret holds rather than to read it.
func undecodable(err error) bool {
	var status apierrors.APIStatus
	return !errors.As(err, &status) && strings.Contains(err.Error(), "failed to decode")
}

// decoded returns the release storage Secret s holds, decoded by Helm's
// driver, or an error wrapping ErrUndecodable that names s.
func decoded(s *corev1.Secret) (*release.Release, error) {
	decodes.Inc()
	rels, err := driver.NewSecrets(listed{secret: s}).Query(map[string]string{})
	if err != nil || len(rels) == 0 {
		return nil, fmt.Errorf("%w: storage Secret %s", ErrUndecodable, s.Name)
	}
	rel, ok := rels[0].(*release.Release)
	if !ok {
		return nil, fmt.Errorf("%w: storage Secret %s", ErrUndecodable, s.Name)
	}
	return rel, nil
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

// conditionalSecrets is the Secret client Helm's Secrets driver stores releases
// through: the lock's half that Helm lacks. Its Update carries the
// resourceVersion at which the Secret was last read or written through this
// client, so that it fails with the API server's Conflict when another writer
// (the helm CLI, another manager) changed the revision since, where Helm's
// driver would overwrite it: of two writers that both read a revision
// deployed, only one marks it superseded and goes on. A revision not read
// through this client is replaced unconditionally, as Helm's driver replaces
// it.
type conditionalSecrets struct {
	corev1client.SecretInterface
	read *readVersions
}

func (s conditionalSecrets) Get(ctx context.Context, name string, opts metav1.GetOptions) (*corev1.Secret, error) {
	obj, ok := s.read.held(name)
	if !ok {
		var err error
		if obj, err = s.SecretInterface.Get(ctx, name, opts); err != nil {
			return nil, err
		}
	}
	decodes.Inc() // Helm's driver decodes it
	s.read.set(name, obj.ResourceVersion)
	return obj, nil
}

func (s conditionalSecrets) List(ctx context.Context, opts metav1.ListOptions) (*corev1.SecretList, error) {
	list, ok := s.read.narrowed(opts)
	if !ok {
		var err error
		if list, err = s.SecretInterface.List(ctx, opts); err != nil {
			return nil, err
		}
		s.read.listed(opts, list)
	}
	decodes.Add(float64(len(list.Items))) // Helm's driver decodes each
	return list, nil
}

func (s conditionalSecrets) Create(ctx context.Context, obj *corev1.Secret, opts metav1.CreateOptions) (*corev1.Secret, error) {
	created, err := s.SecretInterface.Create(ctx, obj, opts)
	s.read.wrote(obj.Name, created, err)
	return created, err
}

func (s conditionalSecrets) Update(ctx context.Context, obj *corev1.Secret, opts metav1.UpdateOptions) (*corev1.Secret, error) {
	if obj.ResourceVersion == "" {
		obj.ResourceVersion = s.read.of(obj.Name)
	}
	updated, err := s.SecretInterface.Update(ctx, obj, opts)
	s.read.wrote(obj.Name, updated, err)
	return updated, err
}

func (s conditionalSecrets) Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error {
	err := s.SecretInterface.Delete(ctx, name, opts)
	s.read.wrote(name, nil, err)
	return err
}

// readVersions holds, by Secret name, the resourceVersion of a storage
// Secret as a driver last read or wrote it. A driver lives as long as one
// Helm client (one reconcile), so it holds the revisions of one action or a
// few: Helm's upgrade reads the deployed revision and then updates it to
// superseded; rudder's Label and Unlock read a revision and update it. Helm's
// actions may write from a goroutine of their own, hence the lock.
//
// It also keeps the last list of a release's storage Secrets, kept up to
// date with the driver's own writes, to answer the reads that follow within
// the same action (afresh): Helm's upgrade lists every revision (Last) and then the
// deployed ones (Deployed); its uninstall lists them after rudder did, and
// reads each before deleting it. A writer that changes a revision meanwhile
// is met by the conditional Update, as one that changed it right after a
// read would be; a write that fails leaves the list unknown, and it is
// dropped.
type readVersions struct {
	mu     sync.Mutex
	byName map[string]string
	last   *lastList
}

// lastList is a list of storage Secrets as the API server answered it, and
// as the driver's writes changed it since.
type lastList struct {
	selector labels.Requirements
	items    []corev1.Secret
}

// set records that the Secret name was read or written at resourceVersion rv.
func (r *readVersions) set(name, rv string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.setLocked(name, rv)
}

func (r *readVersions) setLocked(name, rv string) {
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

// listed records list, the answer to a list with opts, and the version of
// each Secret it holds.
func (r *readVersions) listed(opts metav1.ListOptions, list *corev1.SecretList) {
	if r == nil {
		return
	}
	sel, err := labels.Parse(opts.LabelSelector)
	reqs, selectable := sel.Requirements()
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := range list.Items {
		r.setLocked(list.Items[i].Name, list.Items[i].ResourceVersion)
	}
	r.last = nil
	if err == nil && selectable && len(reqs) > 0 && opts.FieldSelector == "" && opts.ResourceVersion == "" {
		r.last = &lastList{selector: reqs, items: slices.Clone(list.Items)}
	}
}

// narrowed answers a list with opts from the last list, when every
// requirement of the last list's selector is one of opts' too: its answer is
// then the last list's Secrets that opts' selector matches.
func (r *readVersions) narrowed(opts metav1.ListOptions) (*corev1.SecretList, bool) {
	sel, err := labels.Parse(opts.LabelSelector)
	if err != nil || opts.FieldSelector != "" || opts.ResourceVersion != "" {
		return nil, false
	}
	reqs, _ := sel.Requirements()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.last == nil {
		return nil, false
	}
	for _, want := range r.last.selector {
		if !slices.ContainsFunc(reqs, func(q labels.Requirement) bool { return q.Equal(want) }) {
			return nil, false
		}
	}
	out := &corev1.SecretList{}
	for _, item := range r.last.items {
		if sel.Matches(labels.Set(item.Labels)) {
			out.Items = append(out.Items, item)
		}
	}
	return out, true
}

// afresh forgets the last list: the next read goes to the API server. Each
// action of a Client starts so, so that the list answers only the reads of
// the action that made it.
func (r *readVersions) afresh() {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.last = nil
}

// held returns the Secret name as the last list holds it.
func (r *readVersions) held(name string) (*corev1.Secret, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.last == nil {
		return nil, false
	}
	for i := range r.last.items {
		if r.last.items[i].Name == name {
			s := r.last.items[i]
			return &s, true
		}
	}
	return nil, false
}

// wrote records the driver's write of Secret name: now as the API server
// answered it, nil when deleted. A failed write drops the last list: what
// the Secret holds is not known.
func (r *readVersions) wrote(name string, now *corev1.Secret, err error) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		r.last = nil
		return
	}
	if now == nil {
		delete(r.byName, name)
	} else {
		r.setLocked(name, now.ResourceVersion)
	}
	if r.last == nil {
		return
	}
	r.last.items = slices.DeleteFunc(r.last.items, func(s corev1.Secret) bool { return s.Name == name })
	if now != nil && labels.NewSelector().Add(r.last.selector...).Matches(labels.Set(now.Labels)) {
		r.last.items = append(r.last.items, *now)
	}
}

// markingUninstall is the lock's other half: a storage driver that merges
// labels (who holds the release) into the revision Helm's uninstall marks
// uninstalling, in that same write, so that an uninstall cut short by a
// crash leaves a revision that says whose it was, to be unlocked.
type markingUninstall struct {
	driver.Driver
	labels map[string]string
}

func (m markingUninstall) Update(key string, r ri.Releaser) error {
	if rls, ok := r.(*release.Release); ok && rls.Info != nil && rls.Info.Status == rcommon.StatusUninstalling {
		merged := maps.Clone(rls.Labels)
		if merged == nil {
			merged = make(map[string]string, len(m.labels))
		}
		maps.Copy(merged, m.labels)
		rls.Labels = merged
	}
	return m.Driver.Update(key, r)
}
