package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/yaml"

	"github.com/spf13/cobra"

	"github.com/rudder-operator/rudder"
	"github.com/rudder-operator/rudder/internal/hook"
	"github.com/rudder-operator/rudder/internal/manager"
	"github.com/rudder-operator/rudder/internal/rbac"
	"github.com/rudder-operator/rudder/internal/watches"
)

// rbacOptions are the flags of `rudder rbac`.
type rbacOptions struct {
	// serviceAccount is the account's name. Default "deployer".
	serviceAccount string
	// output is yaml or json. Default "yaml".
	output string
	// optional grants the optional reads instead of commenting them. Default false.
	optional bool
	// watchesFile is the watches file. Default "": the one built into rudder.
	watchesFile string
	// samplesDir holds the kinds' samples. Default "config/samples"; skipped when absent.
	samplesDir string
}

func newRBACCommand(e *env) *cobra.Command {
	var o rbacOptions
	cmd := &cobra.Command{
		Use:   "rbac KIND...",
		Short: "Print the ServiceAccount, Role and RoleBinding rudder needs to serve kinds in a namespace as an account",
		Long: `Print the ServiceAccount, Role and RoleBinding an account of the namespace (-n) needs so that rudder,
acting as it (--default-service-account, or the annotation rudder.dev/service-account), can serve
KIND there: what the kind's chart renders (manifests and hooks, over its default values, its ci/
values files, the kind's sample and every boolean toggle of its schema), what its templates look
up, its tests, and what its hooks write.

--optional also grants what only some resources need (values-from, depends-on); yaml shows it
commented. Without --watches-file: the kinds built into rudder. Resource names come from the API
server's discovery when the kubeconfig reaches one, else from client-go's scheme.`,
		Example: e.examples(`  # Give rudder's account deployer in team-a what WebApps and Databases need
  rudder rbac webapp database -n team-a | kubectl apply -f -

  # As a JSON List, with the optional reads granted, for the account tenant
  rudder rbac webapp -n team-a --service-account tenant --optional -o json`),
		ValidArgsFunction: func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
			ws, err := loadWatches(o.watchesFile)
			if err != nil {
				return nil, cobra.ShellCompDirectiveError
			}
			var kinds []string
			for _, w := range ws {
				kinds = append(kinds, strings.ToLower(w.GVK.Kind))
			}
			return kinds, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runRBAC(cmd.Context(), e, o, args)
		},
	}
	cmd.Flags().StringVar(&o.serviceAccount, "service-account", "deployer", "the ServiceAccount rudder acts as")
	outputFlag(cmd, &o.output, "yaml", "yaml or json", "yaml", "json")
	cmd.Flags().BoolVar(&o.optional, "optional", false, "grant the optional reads (yaml shows them commented otherwise)")
	cmd.Flags().StringVar(&o.watchesFile, "watches-file", "", "the watches file (default: the one built into rudder)")
	cmd.Flags().StringVar(&o.samplesDir, "samples-dir", "config/samples", "the kinds' samples; skipped when absent")
	return cmd
}

// runRBAC runs `rudder rbac` for the kinds names, writing the objects to
// e's out and, for json, the notes to its errOut.
func runRBAC(ctx context.Context, e *env, o rbacOptions, names []string) error {
	if len(names) == 0 {
		return fmt.Errorf("name a kind, such as: %s rbac webapp -n team-a", e.name)
	}
	if err := checkOutput(o.output, "yaml", "json"); err != nil {
		return err
	}
	ws, err := loadWatches(o.watchesFile)
	if err != nil {
		return err
	}
	mapper, note, err := rbacMapper(e)
	if err != nil {
		return err
	}
	account, err := o.account(e)
	if err != nil {
		return err
	}
	registry, err := manager.BuiltinHooks()
	if err != nil {
		return err
	}
	notes := []string{}
	if note != "" {
		notes = append(notes, note)
	}
	objs := []client.Object{rbac.ServiceAccount(account)}
	var optional map[string][]rbac.Optional // by Role name, for yaml's comments
	if !o.optional {
		optional = map[string][]rbac.Optional{}
	}
	for _, name := range names {
		w, err := findKind(ws, name, mapper)
		if err != nil {
			return err
		}
		rules, err := kindRules(ctx, w, ws, registry, mapper, account.Namespace, o.samplesDir)
		if err != nil {
			return err
		}
		for _, n := range rules.Notes {
			notes = append(notes, w.GVK.Kind+": "+n)
		}
		if optional != nil {
			optional[rbac.RoleName(w.GVK)] = rules.Optional
		}
		objs = append(objs, rbac.Objects(w.GVK, rules, account, o.optional)...)
	}
	if o.output == "json" {
		for _, n := range notes {
			_, _ = fmt.Fprintln(e.io.ErrOut, "note:", n)
		}
		return printJSON(e.io.Out, objs)
	}
	return printYAML(e.io.Out, names, account, notes, objs, optional)
}

// account returns the account of the flags in the namespace of -n, else of
// the kubeconfig's context, else "default", or an error naming the flag whose
// name the API server would refuse.
func (o rbacOptions) account(e *env) (rbac.Account, error) {
	namespace, err := e.namespace()
	if err != nil {
		// No kubeconfig is fine: the Role is for a namespace, not a cluster.
		namespace = "default"
	}
	a := rbac.Account{Namespace: namespace, Name: o.serviceAccount}
	if problems := validation.IsDNS1123Subdomain(a.Name); len(problems) > 0 {
		return a, fmt.Errorf("flag --service-account: %q is not a ServiceAccount name (%s); use lowercase letters, digits, '-' and '.', such as deployer",
			a.Name, strings.Join(problems, "; "))
	}
	if problems := validation.IsDNS1123Label(a.Namespace); len(problems) > 0 {
		return a, fmt.Errorf("flag -n: %q is not a namespace name (%s); use lowercase letters, digits and '-', such as team-a",
			a.Namespace, strings.Join(problems, "; "))
	}
	return a, nil
}

// kindRules renders w's chart in namespace (with its sample from
// samplesDir, if any) and computes the rules its account needs.
func kindRules(ctx context.Context, w watches.Watch, ws []watches.Watch, registry *hook.Registry, mapper meta.RESTMapper,
	namespace, samplesDir string) (*rbac.Rules, error) {
	sample, err := rbac.Sample(samplesDir, w.GVK)
	if err != nil {
		return nil, err
	}
	chart, err := rbac.Render(ctx, w, namespace, sample)
	if err != nil {
		return nil, err
	}
	hooks, err := registry.Resolve(w.Hooks)
	if err != nil {
		return nil, fmt.Errorf("watches: kind %s: field \"hooks\": %w", w.GVK.Kind, err)
	}
	return rbac.Compute(rbac.Input{Watch: w, Chart: chart, Hooks: hooks, Kinds: ws}, mapper), nil
}

// loadWatches loads the watches file, or the one built into rudder for "".
func loadWatches(file string) ([]watches.Watch, error) {
	if file == "" {
		return watches.Load(rudder.Files, rudder.WatchesFile)
	}
	return watches.LoadFile(file)
}

// rbacMapper returns the API server's discovery as a RESTMapper when the
// cluster of kubectl's flags answers; else client-go's scheme, with a note
// saying so. A kubeconfig that kubectl's flags name but that is wrong (a file
// or context that does not exist) is an error.
func rbacMapper(e *env) (meta.RESTMapper, string, error) {
	config, err := e.flags.ToRESTConfig()
	if err != nil {
		return nil, "", fmt.Errorf("reading the kubeconfig: %w; fix --kubeconfig, KUBECONFIG or --context", err)
	}
	fallback := func(err error) (meta.RESTMapper, string, error) {
		return rbac.SchemeMapper(), fmt.Sprintf("the API server did not answer (%v): resource names come from "+
			"client-go's scheme, not from the cluster; kinds it does not know are guessed", err), nil
	}
	probe := rest.CopyConfig(config)
	probe.Timeout = 5 * time.Second
	dc, err := discovery.NewDiscoveryClientForConfig(probe)
	if err != nil {
		return fallback(err)
	}
	if _, err := dc.ServerVersion(); err != nil {
		return fallback(err)
	}
	httpClient, err := rest.HTTPClientFor(config)
	if err != nil {
		return fallback(err)
	}
	mapper, err := apiutil.NewDynamicRESTMapper(config, httpClient)
	if err != nil {
		return fallback(err)
	}
	return mapper, "", nil
}

// findKind returns the entry of the kind name names as kubectl takes it:
// webapp, WebApp, webapps, webapps.webapp.my.domain, WebApp.webapp.my.domain.
func findKind(ws []watches.Watch, name string, mapper meta.RESTMapper) (watches.Watch, error) {
	want := strings.ToLower(name)
	var known []string
	for _, w := range ws {
		kind, plural := strings.ToLower(w.GVK.Kind), rbac.ResourceOf(w, mapper)
		for _, n := range []string{kind, plural, kind + "." + w.GVK.Group, plural + "." + w.GVK.Group} {
			if want == n {
				return w, nil
			}
		}
		known = append(known, kind)
	}
	return watches.Watch{}, fmt.Errorf("kind %q is not in the watches file; rudder serves: %s", name, strings.Join(known, ", "))
}

// plain returns obj as the API server would print it, less empty metadata.
func plain(obj client.Object) (map[string]any, error) {
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	m := map[string]any{}
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, err
	}
	unstructured.RemoveNestedField(m, "metadata", "creationTimestamp")
	return m, nil
}

func printJSON(out io.Writer, objs []client.Object) error {
	list := map[string]any{"apiVersion": "v1", "kind": "List", "items": []any{}}
	for _, o := range objs {
		m, err := plain(o)
		if err != nil {
			return err
		}
		list["items"] = append(list["items"].([]any), m)
	}
	data, err := json.MarshalIndent(list, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(out, "%s\n", data)
	return err
}

// printYAML prints objs as YAML documents under a header saying what they
// are for, each Role followed by its optional rules, commented.
func printYAML(out io.Writer, names []string, a rbac.Account, notes []string, objs []client.Object, optional map[string][]rbac.Optional) error {
	p := &printer{w: out}
	p.printf("# What rudder needs to serve %s in namespace %s\n", strings.Join(names, ", "), a.Namespace)
	p.printf("# when it acts as %s: run the manager with\n", a.User())
	p.printf("# --default-service-account=%s, or annotate resources rudder.dev/service-account: %s.\n", a.Name, a.Name)
	p.printf("# Generated by `rudder rbac` from the kinds' charts and hooks; see docs/security.md.\n")
	for _, n := range notes {
		p.printf("# note: %s\n", n)
	}
	for _, o := range objs {
		m, err := plain(o)
		if err != nil {
			return err
		}
		data, err := yaml.Marshal(m)
		if err != nil {
			return err
		}
		p.printf("---\n%s", data)
		if _, isRole := m["rules"]; !isRole || m["kind"] != "Role" {
			continue
		}
		for _, opt := range optional[o.GetName()] {
			rules, err := yaml.Marshal(opt.Rules)
			if err != nil {
				return err
			}
			p.printf("# Optional, for %s:\n", opt.Why)
			for _, line := range strings.Split(strings.TrimSuffix(string(rules), "\n"), "\n") {
				p.printf("# %s\n", line)
			}
		}
	}
	return p.err
}
