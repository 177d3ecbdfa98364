package helm

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage/driver"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kblabels "k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// decodes counts the stored revisions decoded (base64, gunzip, JSON) by Helm's
// actions and by rudder's own reads: the main cost of a release's storage.
var decodes = prometheus.NewCounter(prometheus.CounterOpts{
	Name: "rudder_release_decodes_total",
	Help: "Stored Helm release revisions decoded from their storage Secrets.",
})

func init() {
	metrics.Registry.MustRegister(decodes)
}

// secretsDriver is Helm's Secret storage driver in Helm's own format, with
// three changes: it counts every revision it decodes; it writes revisions
// through pooled gzip writers at the default level, where Helm makes a new
// writer at the best level for every write — a third of all that rudder
// allocated in a wave of installs, for a few percent of size; and its Update
// is conditional on the resourceVersion at which it last read or wrote the
// revision (readVersions), where Helm's overwrites whatever is stored, a
// concurrent `helm` CLI write included.
type secretsDriver struct {
	*driver.Secrets
	secrets corev1client.SecretInterface
	read    *readVersions
}

func newSecretsDriver(secrets corev1client.SecretInterface) secretsDriver {
	return secretsDriver{Secrets: driver.NewSecrets(secrets), secrets: secrets, read: &readVersions{}}
}

// readVersions holds, by storage key, the resourceVersion of the storage
// Secret as a driver last read or wrote it. A driver lives as long as one
// Helm client (one reconcile), so it holds the revisions of one action or a
// few: Helm's upgrade reads the deployed revision and then updates it to
// superseded; rudder's Label and Unlock read a revision and update it. Helm's
// actions may write from a goroutine of their own, hence the lock.
type readVersions struct {
	mu    sync.Mutex
	byKey map[string]string
}

// set records that the Secret key was read or written at resourceVersion rv.
func (r *readVersions) set(key, rv string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.byKey == nil {
		r.byKey = map[string]string{}
	}
	r.byKey[key] = rv
}

// of returns the resourceVersion key was last read or written at; "" when
// this driver has not read it.
func (r *readVersions) of(key string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.byKey[key]
}

func (r *readVersions) forget(key string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.byKey, key)
}

// Get reads one revision as Helm's driver does, except that a Secret that
// does not decode is an error, where Helm's driver dereferences the nil
// release it decoded and panics.
func (d secretsDriver) Get(key string) (*release.Release, error) {
	obj, err := d.secrets.Get(context.Background(), key, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, driver.ErrReleaseNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("get: failed to get %q: %w", key, err)
	}
	rel, err := decodeRelease(obj.Data["release"])
	if err != nil {
		return nil, fmt.Errorf("get: failed to decode data %q: %w", key, err)
	}
	decodes.Inc()
	d.read.set(key, obj.ResourceVersion)
	rel.Labels = withoutSystemLabels(obj.Labels)
	return rel, nil
}

// withoutSystemLabels returns a storage Secret's labels without those Helm's
// driver sets itself, as Helm's driver returns a release's labels.
func withoutSystemLabels(labels map[string]string) map[string]string {
	out := make(map[string]string, len(labels))
	for k, v := range labels {
		switch k {
		case "name", "owner", "status", "version", "createdAt", "modifiedAt":
		default:
			out[k] = v
		}
	}
	return out
}

// List reads every revision of the namespace and returns those filter
// keeps, as Helm's driver does. A Secret that does not decode is left out.
func (d secretsDriver) List(filter func(*release.Release) bool) ([]*release.Release, error) {
	list, err := d.secrets.List(context.Background(), metav1.ListOptions{LabelSelector: "owner=helm"})
	if err != nil {
		return nil, fmt.Errorf("list: failed to list: %w", err)
	}
	var rels []*release.Release
	for i := range list.Items {
		if rls := d.decode(&list.Items[i], "list"); rls != nil && filter(rls) {
			rels = append(rels, rls)
		}
	}
	return rels, nil
}

// Query reads the revisions labels select, as Helm's driver does. A Secret
// that does not decode is left out.
func (d secretsDriver) Query(labels map[string]string) ([]*release.Release, error) {
	items, err := d.query(labels)
	if err != nil {
		return nil, err
	}
	rels := make([]*release.Release, 0, len(items))
	for i := range items {
		if rls := d.decode(&items[i], "query"); rls != nil {
			rels = append(rels, rls)
		}
	}
	return rels, nil
}

// query lists the storage Secrets labels select; none is ErrReleaseNotFound.
func (d secretsDriver) query(labels map[string]string) ([]corev1.Secret, error) {
	for _, v := range labels {
		if errs := validation.IsValidLabelValue(v); len(errs) != 0 {
			return nil, fmt.Errorf("invalid label value: %q: %s", v, strings.Join(errs, "; "))
		}
	}
	list, err := d.secrets.List(context.Background(), metav1.ListOptions{LabelSelector: kblabels.SelectorFromSet(labels).String()})
	if err != nil {
		return nil, fmt.Errorf("query: failed to query with labels: %w", err)
	}
	if len(list.Items) == 0 {
		return nil, driver.ErrReleaseNotFound
	}
	return list.Items, nil
}

// decode returns the revision storage Secret s holds, with its labels, and
// records the resourceVersion it was read at; nil, logged, when it does not
// decode.
func (d secretsDriver) decode(s *corev1.Secret, op string) *release.Release {
	rls, err := decodeRelease(s.Data["release"])
	if err != nil {
		d.Log("%s: failed to decode release %s: %s", op, s.Name, err)
		return nil
	}
	decodes.Inc()
	d.read.set(s.Name, s.ResourceVersion)
	rls.Labels = s.Labels
	return rls
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

// Create stores a new revision, as Helm's driver does.
func (d secretsDriver) Create(key string, rls *release.Release) error {
	obj, err := secretOf(key, rls, "createdAt")
	if err != nil {
		return fmt.Errorf("create: failed to encode release %q: %w", rls.Name, err)
	}
	created, err := d.secrets.Create(context.Background(), obj, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return driver.ErrReleaseExists
	}
	if err != nil {
		return fmt.Errorf("create: failed to create: %w", err)
	}
	d.read.set(key, created.ResourceVersion)
	return nil
}

// Update replaces a stored revision, as Helm's driver does, but only as this
// driver last read or wrote it: when the Secret changed since (the helm CLI
// wrote it, say), the update fails with the API server's Conflict and what
// is stored stays. A revision this driver has not read is replaced
// unconditionally, as Helm's driver replaces it.
func (d secretsDriver) Update(key string, rls *release.Release) error {
	obj, err := secretOf(key, rls, "modifiedAt")
	if err != nil {
		return fmt.Errorf("update: failed to encode release %q: %w", rls.Name, err)
	}
	obj.ResourceVersion = d.read.of(key)
	updated, err := d.secrets.Update(context.Background(), obj, metav1.UpdateOptions{})
	if err != nil {
		return fmt.Errorf("update: failed to update %q: %w", key, err)
	}
	d.read.set(key, updated.ResourceVersion)
	return nil
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
	d.read.forget(key)
	return nil, nil
}

// secretOf returns the storage Secret of rls under key: its labels are the
// release's, the time label stamp (createdAt or modifiedAt) and Helm's
// name, owner, status and version; its data the encoded release.
func secretOf(key string, rls *release.Release, stamp string) (*corev1.Secret, error) {
	data, err := encodeRelease(rls)
	if err != nil {
		return nil, err
	}
	labels := make(map[string]string, len(rls.Labels)+5)
	for k, v := range rls.Labels {
		labels[k] = v
	}
	labels[stamp] = strconv.FormatInt(time.Now().Unix(), 10)
	labels["name"] = rls.Name
	labels["owner"] = "helm"
	labels["status"] = rls.Info.Status.String()
	labels["version"] = strconv.Itoa(rls.Version)
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: key, Labels: labels},
		Type:       "helm.sh/release.v1",
		Data:       map[string][]byte{"release": data},
	}, nil
}

var gzipWriters = sync.Pool{New: func() any { return gzip.NewWriter(nil) }}

// encodeRelease encodes rls as Helm stores it: JSON, gzipped, base64. The
// gzip stream is two members, which every gzip reader (Go's, and so Helm's,
// among them) reads as one: the chart, compressed once per chart and kept,
// then the rest of the release. The chart is most of a release's bytes, and
// every install writes it twice and every upgrade three times (pending,
// deployed, and the previous revision superseded): compressing it was 17 %
// of rudder's CPU in a cold install's profile.
func encodeRelease(rls *release.Release) ([]byte, error) {
	var head []byte // the chart member
	rest := rls
	if rls.Chart != nil {
		chartJSON, err := json.Marshal(rls.Chart)
		if err != nil {
			return nil, err
		}
		if head, err = compressedCharts.get(chartJSON); err != nil {
			return nil, err
		}
		withoutChart := *rls
		withoutChart.Chart = nil
		rest = &withoutChart
	}
	b, err := json.Marshal(rest)
	if err != nil {
		return nil, err
	}
	if head != nil {
		// The chart member opened the object; this one goes on after it.
		b = b[1:]
		if len(b) > 1 {
			b = append([]byte{','}, b...)
		}
	}
	tail, err := compress(b)
	if err != nil {
		return nil, err
	}
	raw := append(slices.Clip(head), tail...) // a copy: head is the cache's
	out := make([]byte, base64.StdEncoding.EncodedLen(len(raw)))
	base64.StdEncoding.Encode(out, raw)
	return out, nil
}

// compress gzips b as one member.
func compress(b []byte) ([]byte, error) {
	var buf bytes.Buffer
	w, _ := gzipWriters.Get().(*gzip.Writer)
	defer gzipWriters.Put(w)
	w.Reset(&buf)
	if _, err := w.Write(b); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// compressedCharts holds the compressed opening member of the releases of the
// charts rudder serves, by the chart's JSON digest.
var compressedCharts = chartMembers{byDigest: map[[sha256.Size]byte][]byte{}}

// chartMembers is a bounded cache of compressed chart members: a process
// serves a few charts, each in a few versions.
type chartMembers struct {
	mu       sync.Mutex
	byDigest map[[sha256.Size]byte][]byte
}

// maxChartMembers bounds chartMembers; past it, one entry makes room.
const maxChartMembers = 64

// get returns the gzip member of `{"chart":` chartJSON, compressing it the
// first time.
func (c *chartMembers) get(chartJSON []byte) ([]byte, error) {
	digest := sha256.Sum256(chartJSON)
	c.mu.Lock()
	member, ok := c.byDigest[digest]
	c.mu.Unlock()
	if ok {
		return member, nil
	}
	member, err := compress(append([]byte(`{"chart":`), chartJSON...))
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.byDigest) >= maxChartMembers {
		for k := range c.byDigest {
			delete(c.byDigest, k)
			break
		}
	}
	c.byDigest[digest] = member
	return member, nil
}
