package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/go-logr/logr"

	"github.com/rudder-operator/rudder/internal/helm"
	"github.com/rudder-operator/rudder/internal/reconcile"
)

const usage = `Usage:
  rudder history <kind>/<name> [-n NAMESPACE]         the revisions of a resource's release, newest first
  rudder rollback <kind>/<name> [--to N] [-n NAMESPACE] [--wait 2m]
                                                      roll the release back to revision N (default: the
                                                      revision before the deployed one) and keep it there
  rudder reconcile <kind>/<name> [-n NAMESPACE] [--wait 2m]
                                                      ask rudder to reconcile the resource now and wait
                                                      until a reconcile has seen it (--wait 0: do not wait)
  rudder test <kind>/<name> [-n NAMESPACE] [--wait 6m]
                                                      run the chart's tests on the deployed revision, as
                                                      helm test does, and wait for the result (--wait 0:
                                                      do not wait); fails when a test fails
  rudder diff -f FILE [-n NAMESPACE] [-o text|json]  what applying the resources of FILE (- for standard
                                                      input) would change in their releases, object by
                                                      object; exit status 1 when something would change
  rudder shard-of --shards M NAMESPACE...             the shard of M that owns each namespace (--shard of
                                                      the manager), and how many each shard gets
  rudder manifests [--watches-file watches.yaml] [--output-dir config/crd/bases] [--check]
                                                      generate each kind's CRD from its chart (make manifests)
  rudder rbac KIND... [-n NAMESPACE] [--service-account deployer] [-o yaml|json] [--optional]
                                                      the ServiceAccount, Role and RoleBinding rudder needs
                                                      to serve KIND in a namespace when it acts as that
                                                      account (--default-service-account)
  rudder bundle [--version 0.1.0] [--image rudder:latest] [--output-dir bundle] [--check]
                                                      generate the OLM bundle from config/ (make bundle)
As a kubectl plugin (an executable kubectl-rudder on PATH): kubectl rudder history webapp/my-webapp
`

// Run runs the command line args (without the program name), writing to out.
// Config is nil to read the kubeconfig the way kubectl does.
func Run(ctx context.Context, args []string, out io.Writer, config *rest.Config) error {
	if len(args) == 0 {
		return errors.New(strings.TrimSpace(usage))
	}
	cmd, rest := args[0], args[1:]
	if cmd == "manifests" {
		return runManifests(rest, out)
	}
	if cmd == "bundle" {
		return runBundle(rest, out)
	}
	if cmd == "rbac" {
		return runRBAC(ctx, rest, out, os.Stderr, config)
	}
	if cmd == "shard-of" {
		return runShardOf(rest, out)
	}
	if cmd == "diff" {
		return runDiff(ctx, rest, os.Stdin, out, config)
	}
	fs := flag.NewFlagSet("rudder "+cmd, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	namespace := fs.String("n", "", "namespace (default: the kubeconfig context's)")
	fs.StringVar(namespace, "namespace", "", "namespace")
	to := fs.Int("to", 0, "revision to roll back to")
	wait := fs.Duration("wait", -1, "wait this long for the rollback to be deployed, the reconcile or the tests to run")
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig file")
	target, flags := splitTarget(rest)
	if err := fs.Parse(flags); err != nil {
		return fmt.Errorf("%w\n%s", err, usage)
	}
	if cmd != "history" && cmd != "rollback" && cmd != "reconcile" && cmd != "test" {
		return fmt.Errorf("unknown command %q\n%s", cmd, usage)
	}
	kind, name, ok := strings.Cut(target, "/")
	if !ok || kind == "" || name == "" {
		return fmt.Errorf("want <kind>/<name>, such as webapp/my-webapp; got %q\n%s", target, usage)
	}
	c, err := connect(config, *kubeconfig, *namespace)
	if err != nil {
		return err
	}
	obj, err := c.get(ctx, kind, name)
	if err != nil {
		return err
	}
	if cmd == "reconcile" {
		if *wait < 0 {
			*wait = 2 * time.Minute
		}
		return c.reconcile(ctx, out, obj, *wait)
	}
	if cmd == "test" {
		if *wait < 0 {
			*wait = 6 * time.Minute // the default test.timeout, and a reconcile's start
		}
		return c.test(ctx, out, obj, *wait)
	}
	*wait = max(*wait, 0)
	release := strings.ToLower(obj.GetKind()) + "-" + obj.GetName()
	if r, found, _ := unstructured.NestedString(obj.Object, "status", "release", "name"); found && r != "" {
		release = r
	}
	revs, err := c.helm.History(obj.GetNamespace(), release)
	if err != nil {
		return err
	}
	if cmd == "history" {
		return printHistory(out, revs)
	}
	return c.rollback(ctx, out, obj, revs, *to, *wait)
}

// splitTarget takes the first argument that is not a flag (or a flag's value).
func splitTarget(args []string) (string, []string) {
	var flags []string
	target := ""
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case strings.HasPrefix(a, "-"):
			flags = append(flags, a)
			if !strings.Contains(a, "=") && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
				i++
				flags = append(flags, args[i])
			}
		case target == "":
			target = a
		default:
			flags = append(flags, a)
		}
	}
	return target, flags
}

type conn struct {
	client    client.Client
	mapper    meta.RESTMapper
	helm      *helm.Getter
	namespace string
}

func connect(config *rest.Config, kubeconfig, namespace string) (*conn, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = kubeconfig
	loader := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{})
	if config == nil {
		var err error
		if config, err = loader.ClientConfig(); err != nil {
			return nil, fmt.Errorf("reading the kubeconfig: %w", err)
		}
	}
	if namespace == "" {
		namespace, _, _ = loader.Namespace()
		if namespace == "" {
			namespace = "default"
		}
	}
	httpClient, err := rest.HTTPClientFor(config)
	if err != nil {
		return nil, err
	}
	mapper, err := apiutil.NewDynamicRESTMapper(config, httpClient)
	if err != nil {
		return nil, err
	}
	c, err := client.New(config, client.Options{Mapper: mapper})
	if err != nil {
		return nil, err
	}
	hg, err := helm.NewGetter(config, mapper, logr.Discard())
	if err != nil {
		return nil, err
	}
	return &conn{client: c, mapper: mapper, helm: hg, namespace: namespace}, nil
}

// get reads the custom resource kind/name, kind as kubectl takes it
// (webapp, webapps, WebApp, webapps.webapp.my.domain).
func (c *conn) get(ctx context.Context, kind, name string) (*unstructured.Unstructured, error) {
	gvr, err := c.mapper.ResourceFor(schema.ParseGroupResource(strings.ToLower(kind)).WithVersion(""))
	if err != nil {
		return nil, fmt.Errorf("kind %q: %w", kind, err)
	}
	gvk, err := c.mapper.KindFor(gvr)
	if err != nil {
		return nil, fmt.Errorf("kind %q: %w", kind, err)
	}
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(gvk)
	if err := c.client.Get(ctx, types.NamespacedName{Namespace: c.namespace, Name: name}, obj); err != nil {
		return nil, err
	}
	return obj, nil
}

// printer writes lines and keeps the first write error.
type printer struct {
	w   io.Writer
	err error
}

func (p *printer) printf(format string, args ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format, args...)
	}
}

func printHistory(out io.Writer, revs []*helm.Release) error {
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	p := &printer{w: w}
	p.printf("REVISION\tUPDATED\tSTATUS\tCHART\tAPP VERSION\tDESCRIPTION\n")
	for _, r := range revs {
		p.printf("%d\t%s\t%s\t%s-%s\t%s\t%s\n", r.Revision, r.Updated.Format(time.ANSIC), r.Status, r.Chart, r.ChartVersion, r.AppVersion, r.Description)
	}
	if p.err != nil {
		return p.err
	}
	return w.Flush()
}

// rollback asks rudder to roll back to revision `to` (default: the newest
// revision before the deployed one) and, with wait, waits until it has.
func (c *conn) rollback(ctx context.Context, out io.Writer, obj *unstructured.Unstructured, revs []*helm.Release, to int, wait time.Duration) error {
	if to == 0 {
		to = previous(revs)
		if to == 0 {
			return errors.New("there is no revision before the deployed one to roll back to; pick one with --to")
		}
	}
	known := false
	for _, r := range revs {
		known = known || r.Revision == to
	}
	if !known {
		return fmt.Errorf("revision %d is not in the release's history; see `rudder history`", to)
	}
	patch := fmt.Appendf(nil, `{"metadata":{"annotations":{%q:%q}}}`, reconcile.AnnotationRollbackTo, strconv.Itoa(to))
	if err := c.client.Patch(ctx, obj, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return fmt.Errorf("asking for the rollback: %w", err)
	}
	p := &printer{w: out}
	p.printf("%s/%s: rollback to revision %d requested (annotation %s)\n", strings.ToLower(obj.GetKind()), obj.GetName(), to, reconcile.AnnotationRollbackTo)
	if wait == 0 {
		return p.err
	}
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	release, newest := revs[0].Name, revs[0].Revision // History is newest first
	for {
		msg, done, err := c.rolledBack(ctx, obj, release, newest, to)
		if err != nil {
			return err
		}
		if done {
			p.printf("%s\n", msg)
			return p.err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the rollback was not deployed within %s: is rudder running? see kubectl describe", wait)
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// rolledBack reports whether the rollback to revision `to` asked for when
// the newest revision was `newest` is done: a newer revision made for it is
// deployed, and the resource's status shows it as Released. It returns the
// Released condition's message then.
func (c *conn) rolledBack(ctx context.Context, obj *unstructured.Unstructured, release string, newest, to int) (string, bool, error) {
	revs, err := c.helm.History(obj.GetNamespace(), release)
	if err != nil {
		return "", false, err
	}
	made := 0
	for _, r := range revs {
		if r.Revision > newest && r.Status == "deployed" && r.Labels[reconcile.LabelRollbackTo] == strconv.Itoa(to) {
			made = r.Revision
		}
	}
	if made == 0 {
		return "", false, nil
	}
	if err := c.client.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
		return "", false, err
	}
	if rev, _, _ := unstructured.NestedInt64(obj.Object, "status", "release", "revision"); rev != int64(made) {
		return "", false, nil
	}
	conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, raw := range conds {
		if m, ok := raw.(map[string]any); ok && m["type"] == reconcile.ConditionReleased && m["status"] == "True" {
			return fmt.Sprint(m["message"]), true, nil
		}
	}
	return "", false, nil
}

// previous returns the newest revision older than the newest deployed one.
func previous(revs []*helm.Release) int {
	deployed := -1
	for i, r := range revs {
		if r.Status == "deployed" {
			deployed = i
			break
		}
	}
	if deployed < 0 || deployed+1 >= len(revs) {
		return 0
	}
	return revs[deployed+1].Revision
}
