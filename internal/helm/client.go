package helm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"time"

	"github.com/go-logr/logr"
	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/kube"
	"helm.sh/helm/v4/pkg/postrenderer"
	ri "helm.sh/helm/v4/pkg/release"
	rcommon "helm.sh/helm/v4/pkg/release/common"
	release "helm.sh/helm/v4/pkg/release/v1"
	"helm.sh/helm/v4/pkg/storage"
	"helm.sh/helm/v4/pkg/storage/driver"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"

	"github.com/rudder-operator/rudder/internal/apicalls"
	"github.com/rudder-operator/rudder/internal/signature"
)

// ErrReleaseNotFound is returned by Revision for a revision that is not stored.
var ErrReleaseNotFound = errors.New("release not found")

// ErrUndecodable is returned by Revision for a storage Secret that does not
// hold a release Helm can decode.
var ErrUndecodable = errors.New("stored revision does not decode")

// Getter hands out a Client per namespace and identity. It is safe for
// concurrent use.
type Getter struct {
	rcg       *restClientGetter
	clientset kubernetes.Interface
	caps      *capabilities
	key       *signature.Key
	log       logr.Logger
}

// GetterOption configures a Getter.
type GetterOption func(*Getter)

// WithSigningKey has the Getter sign every revision it writes with key
// (package signature) and trust only the stored revisions signed for the
// resource of each Access (Release.Signed). Without it, nothing is signed and
// every revision counts as signed: what a program that has no key of its
// own, such as the command line's history, needs.
func WithSigningKey(key *signature.Key) GetterOption {
	return func(g *Getter) { g.key = key }
}

// WithoutCaches turns the Getter's one cache off: the cluster's capabilities
// are then read for every action, as Helm reads them.
func WithoutCaches() GetterOption {
	return func(g *Getter) { g.caps.off = true }
}

// NewGetter returns a Getter that talks to the cluster of cfg, resolving kinds
// with mapper (the manager's). Helm's debug output goes to log at V(1).
func NewGetter(cfg *rest.Config, mapper meta.RESTMapper, log logr.Logger, opts ...GetterOption) (*Getter, error) {
	cfg = rest.CopyConfig(cfg)
	apicalls.Named(cfg, "helm")
	rcg, err := newRESTClientGetter(cfg, mapper)
	if err != nil {
		return nil, err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("creating clientset: %w", err)
	}
	caps := &capabilities{discovery: rcg.discovery, now: time.Now}
	g := &Getter{rcg: rcg, clientset: cs, caps: caps, log: log}
	for _, opt := range opts {
		opt(g)
	}
	return g, nil
}

// Access says as whom, and within what, a Client acts on the cluster.
type Access struct {
	// Scope bounds the objects of the release; its Namespace is where the
	// release is stored.
	Scope Scope
	// User, when set, is impersonated for everything the release's actions
	// do to the cluster: rendering (Helm's lookup), applying, waiting,
	// deleting, tests. Release storage is read and written with the
	// Getter's own identity. Empty: the Getter's own identity throughout.
	User string
	// Resource is the UID of the custom resource the release serves. Only
	// the revisions signed for it are evidence: the Client's actions see no
	// other (trusted).
	Resource types.UID
	// Owns tells the objects that belong to the release's custom resource:
	// an upgrade or rollback deletes an object the revision before listed
	// only when it does, and so does the uninstall of a revision rudder did
	// not write; an object that is there is changed only when it does or
	// the revision before listed it. Nil: every object.
	Owns func(metav1.Object) bool
	// HandOver is the annotation, "key=value", that hands an object to the
	// resource (Owns then claims it): named in the refusal of an object the
	// resource does not own, for whoever may edit that object.
	HandOver string
}

// For returns a Client for the releases stored in a.Scope.Namespace, acting
// as a.User within a.Scope. A Client is cheap: it shares the Getter's
// clientset, discovery and capabilities (read at most once a minute, not
// once per action as Helm would). Make one per reconcile and do not share it
// between goroutines.
func (g *Getter) For(a Access) (*Client, error) {
	ns := a.Scope.Namespace
	caps, err := g.caps.get()
	if err != nil {
		return nil, fmt.Errorf("initializing Helm for namespace %q: %w", ns, err)
	}
	logs := logr.ToSlogHandler(g.log.WithValues("namespace", ns))
	rcg := g.rcg.forNamespace(ns)
	if a.User != "" {
		rcg = rcg.as(a.User)
	}
	kc := kube.New(rcg)
	kc.Namespace = ns
	kc.SetLogger(logs)
	secrets := g.clientset.CoreV1().Secrets(ns)
	read := &readVersions{}
	storageDriver := newSecretsDriverReading(secrets, read)
	storageDriver.SetLogger(logs)
	trust := newTrusted(storageDriver, g.key, a.Resource, func(name string) (int, error) { return newestStored(secrets, name) })
	cfg := action.NewConfiguration(action.ConfigurationSetLogger(logs))
	cfg.RESTClientGetter = rcg
	done := &applied{}
	cfg.KubeClient = confined{Client: kc, scope: a.Scope, owns: a.Owns, handOver: a.HandOver, signed: trust.signedManifest, built: &builtFromSigned{}, applied: done}
	cfg.Releases = storage.Init(trust)
	cfg.Releases.SetLogger(logs)
	cfg.Capabilities = caps
	cfg.HookOutputFunc = func(_, _, _ string) io.Writer { return io.Discard }
	return &Client{cfg: cfg, namespace: ns, key: g.key, resource: a.Resource, trust: trust, secrets: secrets, read: read, applied: done}, nil
}

// driver returns Helm's Secrets storage driver of namespace ns on the shared
// clients.
func (g *Getter) driver(ns string) driver.Driver {
	d := newSecretsDriver(g.clientset.CoreV1().Secrets(ns))
	d.SetLogger(logr.ToSlogHandler(g.log.WithValues("namespace", ns)))
	return d
}

// Client runs Helm actions on the releases of one namespace, for one custom
// resource.
type Client struct {
	cfg       *action.Configuration
	namespace string
	key       *signature.Key
	resource  types.UID
	trust     *trusted                     // the storage driver of its actions
	secrets   corev1client.SecretInterface // release storage, read as rudder
	read      *readVersions                // what its storage driver read and wrote
	applied   *applied                     // the answers to its actions' applies
}

// release is r as rudder reads it, with whether it is signed for the
// Client's resource.
func (c *Client) release(r *release.Release) *Release {
	out := fromHelm(r)
	if out != nil {
		out.Signed = verdict(c.key, c.resource, r)
	}
	return out
}

// written is r, the revision an action just wrote, with what the action's
// applies answered (Release.Applied); nil when r is.
func (c *Client) written(r *release.Release) *Release {
	out := c.release(r)
	if out != nil {
		out.Applied = c.applied.take()
	}
	return out
}

// v1 returns the revision r, which Helm's actions and storage hand out as an
// interface, as the one type rudder stores: Helm's release v1.
func v1(r ri.Releaser) (*release.Release, error) {
	switch rel := r.(type) {
	case nil:
		return nil, nil
	case *release.Release:
		return rel, nil
	case release.Release:
		return &rel, nil
	}
	return nil, fmt.Errorf("%w: a revision of type %T", ErrUndecodable, r)
}

// Spec is what a release should be.
type Spec struct {
	// Name is the release name.
	Name string
	// Chart is the chart to render.
	Chart *Chart
	// Values are the release values (Helm's user-supplied values).
	Values map[string]any
	// Labels are stored on the new revision, next to Helm's own labels.
	Labels map[string]string
	// MaxHistory bounds the revisions kept in storage; 0 keeps all.
	MaxHistory int
	// PostRenderer, when set, edits the rendered manifest before it is applied.
	PostRenderer postrenderer.PostRenderer
	// Replace lets Install install over a history whose newest revision is
	// uninstalled (helm uninstall --keep-history), numbering on from it. Only
	// then: Helm's replace also marks a newest revision that is pending
	// superseded, which would break another writer's install in flight.
	Replace bool
}

// How every action of a Client applies, waits and deletes (README, "Helm 4").
//
// Objects are applied by server-side apply under Helm's field manager (the
// binary's name, as Helm 3 wrote them, so that the first Helm 4 upgrade of a
// Helm 3 release moves their fields from its client-side entry to an apply
// entry of the same manager). Conflicts are forced: the chart is the
// declared state, as Helm 3's three-way merge overwrote the fields it
// changed; a field the chart does not render is never taken. Drift repair
// applies under its own manager (package ssa), which an upgrade overrides.
//
// Only hooks are waited for: readiness is the reconciler's business, so no
// action holds a worker until the release's objects are ready or gone.
const (
	serverSideApply = "true"
	forceConflicts  = true
	waitStrategy    = kube.HookOnlyStrategy
)

// Install installs a new release. On failure the returned release, when not
// nil, is the failed revision Helm stored.
func (c *Client) Install(ctx context.Context, s Spec) (*Release, error) {
	c.read.afresh()
	in := action.NewInstall(c.cfg)
	in.ReleaseName = s.Name
	in.Namespace = c.namespace
	in.Labels = withoutNulls(s.Labels)
	in.PostRenderer = s.PostRenderer
	in.Replace = s.Replace
	in.ServerSideApply, in.ForceConflicts = true, forceConflicts
	in.WaitStrategy = waitStrategy
	// The API server validates every object; Helm's client-side validation
	// would download and decode the OpenAPI document of each group first.
	in.DisableOpenAPIValidation = true
	c.applied.take()
	r, err := in.RunWithContext(ctx, s.Chart.chart, s.Values)
	rel, cerr := v1(r)
	if cerr != nil {
		return nil, cerr
	}
	return c.written(c.stored(rel, err)), err
}

// stored returns rel, the release an action returned, unless the action
// failed before storing it: Helm's install returns its unsaved release with a
// render error, and no revision of it exists to wait for.
func (c *Client) stored(rel *release.Release, err error) *release.Release {
	if err == nil || rel == nil {
		return rel
	}
	if _, gerr := c.cfg.Releases.Get(rel.Name, rel.Version); gerr != nil {
		return nil
	}
	return rel
}

// Upgrade upgrades a release to a new revision, pruning storage to
// s.MaxHistory revisions. On failure the returned release, when not nil, is
// the failed revision Helm stored.
func (c *Client) Upgrade(ctx context.Context, s Spec) (*Release, error) {
	c.read.afresh()
	up := action.NewUpgrade(c.cfg)
	up.Namespace = c.namespace
	up.Labels = s.Labels
	up.PostRenderer = s.PostRenderer
	up.MaxHistory = s.MaxHistory
	up.ServerSideApply, up.ForceConflicts = serverSideApply, forceConflicts
	up.WaitStrategy = waitStrategy
	up.DisableOpenAPIValidation = true // as for Install
	c.applied.take()
	r, err := up.RunWithContext(ctx, s.Name, s.Chart.chart, s.Values)
	rel, cerr := v1(r)
	if cerr != nil {
		return nil, cerr
	}
	return c.written(c.stored(rel, err)), err
}

// Uninstall deletes a release's objects and its whole history. A release
// that does not exist is not an error. labels are merged into the newest
// revision in the same write that marks it uninstalling (markingUninstall),
// so that a process killed before the history is gone leaves a revision
// that says whose it was.
//
// Helm's uninstall sees only the revisions signed for the resource (trusted).
// Of a newer revision written by someone else (not Signed), the manifest is
// not trusted: its hooks do not run, and of the objects it lists only those
// the custom resource owns (Access.Owns) are deleted; then its storage Secret
// is. A storage Secret that does not decode is left as it is. left is called
// with each object and storage Secret left behind.
func (c *Client) Uninstall(name string, labels map[string]string, left func(ref string)) error {
	c.read.afresh()
	stored, err := c.storedRevisions(name)
	if err != nil {
		return fmt.Errorf("uninstalling release %q: %w", name, err)
	}
	for _, key := range stored.undecodable {
		left("Secret/" + key + " (a storage Secret that does not decode)")
	}
	if stored.signed > 0 {
		if err := c.uninstallSigned(name, labels); err != nil {
			return fmt.Errorf("uninstalling release %q: %w", name, err)
		}
	}
	if err := c.uninstallForeign(stored, left); err != nil {
		return fmt.Errorf("uninstalling release %q: %w", name, err)
	}
	return nil
}

// uninstallSigned runs Helm's uninstall over the revisions signed for the
// resource.
func (c *Client) uninstallSigned(name string, labels map[string]string) error {
	if len(labels) > 0 {
		d := c.cfg.Releases.Driver
		c.cfg.Releases.Driver = markingUninstall{Driver: d, labels: labels}
		defer func() { c.cfg.Releases.Driver = d }()
	}
	un := action.NewUninstall(c.cfg)
	un.IgnoreNotFound = true
	un.WaitStrategy = waitStrategy
	un.DeletionPropagation = string(metav1.DeletePropagationBackground)
	_, err := un.Run(name)
	if errors.Is(err, driver.ErrReleaseNotFound) {
		return nil
	}
	return err
}

// uninstallForeign deletes, of the newest revision not signed for the
// resource when it is newer than every signed one, the objects the resource
// owns, then the storage Secrets of every revision not signed for it.
func (c *Client) uninstallForeign(stored storedRevisions, left func(ref string)) error {
	if len(stored.foreign) == 0 {
		return nil
	}
	if newest := stored.foreign[0]; newest.rel.Version > stored.newestSigned {
		rl, err := c.cfg.KubeClient.Build(bytes.NewBufferString(newest.rel.Manifest), false)
		if err != nil {
			left(fmt.Sprintf("the objects of revision %d, which rudder did not write and whose manifest does not build (%v)", newest.rel.Version, err))
		} else if len(rl) > 0 {
			kc, _ := c.cfg.KubeClient.(confined)
			kc.ownedOnly, kc.skipped = true, left
			if _, errs := kc.Delete(rl, metav1.DeletePropagationBackground); len(errs) > 0 {
				return errors.Join(errs...)
			}
		}
	}
	for _, f := range stored.foreign {
		uid := f.uid
		err := c.secrets.Delete(context.Background(), f.secret, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
		c.read.wrote(f.secret, nil, err)
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return err
		}
		c.trust.forget(makeKey(f.rel.Name, f.rel.Version))
	}
	return nil
}

// RollbackOptions say how Rollback rolls a release back.
type RollbackOptions struct {
	// To is the revision rolled back to.
	To int
	// MaxHistory bounds the revisions kept; 0 keeps all.
	MaxHistory int
	// Pending labels are merged into revision To just before the rollback,
	// and removed from it after: Helm copies them onto the new revision while
	// it is pending-rollback, the only way to mark that revision as ours.
	Pending map[string]string
	// Labels are merged into the new revision's (which Helm copied from
	// revision To); a value "null" removes one.
	Labels map[string]string
	// Description, when not empty, replaces the new revision's.
	Description string
}

// Rollback makes a new revision of release name from an older one, the way
// `helm rollback` does, and labels it as opts say. It returns the new revision.
//
// A revision rudder did not write (not Signed) is never rolled back to: its
// manifest is not one rudder rendered. Rollback then fails with ErrNotSigned.
func (c *Client) Rollback(ctx context.Context, name string, opts RollbackOptions) (*Release, error) {
	c.read.afresh()
	target, err := c.get(name, opts.To)
	if errors.Is(err, ErrNotSigned) {
		return nil, fmt.Errorf("rolling release %q back to revision %d: %w: its manifest is applied only by whoever wrote it (helm rollback)", name, opts.To, ErrNotSigned)
	}
	if err != nil {
		return nil, fmt.Errorf("reading release %q revision %d: %w", name, opts.To, err)
	}
	if len(opts.Pending) > 0 {
		before := make(map[string]string, len(opts.Pending))
		for k := range opts.Pending {
			before[k] = "null"
			if v, ok := target.Labels[k]; ok {
				before[k] = v
			}
		}
		if _, err := c.relabel(target, opts.Pending); err != nil {
			return nil, err
		}
		defer func() {
			// Best effort: a label left on an old revision only marks
			// rollbacks that will never again get that revision's number.
			_, _ = c.Label(name, opts.To, before)
		}()
	}
	rb := action.NewRollback(c.cfg)
	rb.Version = opts.To
	rb.MaxHistory = opts.MaxHistory
	rb.ServerSideApply, rb.ForceConflicts = serverSideApply, forceConflicts
	rb.WaitStrategy = waitStrategy
	if err := rb.Run(name); err != nil {
		return nil, fmt.Errorf("rolling release %q back to revision %d: %w", name, opts.To, err)
	}
	last, err := c.cfg.Releases.Last(name)
	if err != nil {
		return nil, fmt.Errorf("reading release %q after its rollback: %w", name, err)
	}
	rel, err := v1(last)
	if err != nil {
		return nil, err
	}
	// Set in the write that labels it: Helm's own Description takes at most
	// 256 characters, and rudder's names the error it rolls back from.
	if opts.Description != "" && rel.Info != nil {
		rel.Info.Description = opts.Description
	}
	return c.relabel(rel, opts.Labels)
}

// get reads revision version of release name through the Client's storage.
func (c *Client) get(name string, version int) (*release.Release, error) {
	r, err := c.cfg.Releases.Get(name, version)
	if err != nil {
		return nil, err
	}
	return v1(r)
}

// Label merges labels into the stored revision `revision` of release name; a
// value "null" removes a label.
func (c *Client) Label(name string, revision int, labels map[string]string) (*Release, error) {
	c.read.afresh()
	rel, err := c.get(name, revision)
	if err != nil {
		return nil, fmt.Errorf("reading release %q revision %d: %w", name, revision, err)
	}
	return c.relabel(rel, labels)
}

func (c *Client) relabel(rel *release.Release, labels map[string]string) (*Release, error) {
	merged := make(map[string]string, len(rel.Labels)+len(labels))
	for k, v := range rel.Labels {
		merged[k] = v
	}
	for k, v := range labels {
		merged[k] = v
	}
	rel.Labels = withoutNulls(merged)
	if err := c.cfg.Releases.Update(rel); err != nil {
		return nil, fmt.Errorf("labeling release %q revision %d: %w", rel.Name, rel.Version, err)
	}
	return c.release(rel), nil
}

// withoutNulls returns labels without the ones whose value is "null".
func withoutNulls(labels map[string]string) map[string]string {
	out := make(map[string]string, len(labels))
	for k, v := range labels {
		if v != "null" {
			out[k] = v
		}
	}
	return out
}

// Unlock marks a pending revision as failed, so that a release whose writer
// died mid-operation can move on, and removes the labels named drop from it.
// A revision no longer pending is left as it is, and Unlock reports false.
func (c *Client) Unlock(name string, revision int, description string, drop ...string) (bool, error) {
	c.read.afresh()
	rel, err := c.get(name, revision)
	if err != nil {
		return false, fmt.Errorf("reading release %q revision %d: %w", name, revision, err)
	}
	// Helm's IsPending leaves out an uninstall under way.
	if !rel.Info.Status.IsPending() && rel.Info.Status != rcommon.StatusUninstalling {
		return false, nil
	}
	rel.SetStatus(rcommon.StatusFailed, description)
	for _, k := range drop {
		delete(rel.Labels, k)
	}
	if err := c.cfg.Releases.Update(rel); err != nil {
		return false, fmt.Errorf("unlocking release %q revision %d: %w", name, revision, err)
	}
	return true, nil
}

// History reads every stored revision of release name in namespace ns,
// newest first, as `helm history` does, each Signed when it was written for
// the custom resource of UID resource.
func (g *Getter) History(ns, name string, resource types.UID) ([]*Release, error) {
	rels, err := storage.Init(g.driver(ns)).History(name)
	if errors.Is(err, driver.ErrReleaseNotFound) || (err == nil && len(rels) == 0) {
		return nil, fmt.Errorf("release %q in namespace %q: %w", name, ns, ErrReleaseNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("reading the history of release %q: %w", name, err)
	}
	out := make([]*Release, 0, len(rels))
	for _, r := range rels {
		rel, err := v1(r)
		if err != nil {
			continue
		}
		o := fromHelm(rel)
		o.Signed = verdict(g.key, resource, rel)
		out = append(out, o)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Revision > out[j].Revision })
	return out, nil
}

// Revision reads one stored revision of release name in namespace ns,
// manifest included, without building a whole action configuration; Signed
// when it was written for the custom resource of UID resource.
func (g *Getter) Revision(ns, name string, revision int, resource types.UID) (*Release, error) {
	rel, err := get(g.driver(ns), makeKey(name, revision))
	if errors.Is(err, driver.ErrReleaseNotFound) {
		return nil, fmt.Errorf("release %q revision %d: %w", name, revision, ErrReleaseNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("reading release %q revision %d: %w", name, revision, err)
	}
	out := fromHelm(rel)
	out.Signed = verdict(g.key, resource, rel)
	return out, nil
}

// newestStored returns the highest revision number the storage Secrets of
// release name say they hold, whether they decode or not: their version
// labels, read without their data.
func newestStored(secrets corev1client.SecretInterface, name string) (int, error) {
	list, err := secrets.List(context.Background(), metav1.ListOptions{LabelSelector: "owner=helm,name=" + name})
	if err != nil {
		return 0, err
	}
	n := 0
	for i := range list.Items {
		if v, err := strconv.Atoi(list.Items[i].Labels["version"]); err == nil {
			n = max(n, v)
		}
	}
	return n, nil
}

// storedRevisions is what the storage Secrets of one release hold.
type storedRevisions struct {
	undecodable  []string          // Secrets that do not decode
	signed       int               // revisions signed for the resource
	newestSigned int               // the highest number among them
	foreign      []foreignRevision // the others, newest first
}

type foreignRevision struct {
	secret string
	uid    types.UID
	rel    *release.Release
}

// storedRevisions reads and decodes every storage Secret of release name.
func (c *Client) storedRevisions(name string) (storedRevisions, error) {
	opts := metav1.ListOptions{LabelSelector: "owner=helm,name=" + name}
	list, err := c.secrets.List(context.Background(), opts)
	if err != nil {
		return storedRevisions{}, err
	}
	c.read.listed(opts, list) // Helm's uninstall lists the same
	var out storedRevisions
	for i := range list.Items {
		s := &list.Items[i]
		rel, err := decoded(s)
		switch {
		case err != nil:
			out.undecodable = append(out.undecodable, s.Name)
		case verdict(c.key, c.resource, rel):
			out.signed++
			out.newestSigned = max(out.newestSigned, rel.Version)
		default:
			out.foreign = append(out.foreign, foreignRevision{secret: s.Name, uid: s.UID, rel: rel})
		}
	}
	sort.Slice(out.foreign, func(i, j int) bool { return out.foreign[i].rel.Version > out.foreign[j].rel.Version })
	return out, nil
}
