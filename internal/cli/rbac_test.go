package cli

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/rudder-operator/rudder"
	"github.com/rudder-operator/rudder/internal/helm"
	"github.com/rudder-operator/rudder/internal/hook"
	"github.com/rudder-operator/rudder/internal/manager"
	"github.com/rudder-operator/rudder/internal/rbac"
	"github.com/rudder-operator/rudder/internal/watches"
	"github.com/rudder-operator/rudder/test/testenv"
)

// TestRun_RBACIsSufficient applies what `rudder rbac KIND` prints to a
// namespace and checks, as the account it binds, that the account may create
// every object the kind's chart renders there (server-side dry run), and
// nothing in another namespace, and may do what the kind's hooks declare.
func TestRun_RBACIsSufficient(t *testing.T) {
	ctx := context.Background()
	root, err := testenv.Root()
	if err != nil {
		t.Fatal(err)
	}
	samples := filepath.Join(root, "config", "samples")
	ws, err := watches.Load(rudder.Files, rudder.WatchesFile)
	if err != nil {
		t.Fatal(err)
	}
	registry, err := manager.BuiltinHooks()
	if err != nil {
		t.Fatal(err)
	}
	other := testenv.Namespace(t, k8s, "rbac-other-")
	for _, w := range ws {
		t.Run(w.GVK.Kind, func(t *testing.T) {
			ns := testenv.Namespace(t, k8s, "rbac-")
			// Pods need their namespace's default ServiceAccount, which no
			// controller makes on envtest.
			if err := k8s.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "default"}}); err != nil {
				t.Fatal(err)
			}
			out, err := run(ctx, "rbac", strings.ToLower(w.GVK.Kind), "-n", ns, "--service-account", "tenant", "--samples-dir", samples)
			if err != nil {
				t.Fatal(err)
			}
			// What `| kubectl apply -f -` reads: YAML documents.
			printed, err := helm.ParseManifest(out)
			if err != nil {
				t.Fatalf("the output is not YAML documents: %v\n%s", err, out)
			}
			kinds := map[string]bool{}
			for _, obj := range printed {
				kinds[obj.GetKind()] = true
				if err := k8s.Create(ctx, obj); err != nil {
					t.Fatalf("applying %s/%s: %v", obj.GetKind(), obj.GetName(), err)
				}
			}
			for _, k := range []string{"ServiceAccount", "Role", "RoleBinding"} {
				if !kinds[k] {
					t.Errorf("the output has no %s: %s", k, out)
				}
			}
			as := impersonating(t, "system:serviceaccount:"+ns+":tenant")

			sample, err := rbac.Sample(samples, w.GVK)
			if err != nil {
				t.Fatal(err)
			}
			chart, err := rbac.Render(ctx, w, ns, sample)
			if err != nil {
				t.Fatal(err)
			}
			if len(chart.Objects) == 0 {
				t.Fatal("the chart renders nothing")
			}
			for _, obj := range chart.Objects {
				obj := obj.DeepCopy()
				obj.SetNamespace(ns)
				if err := as.Create(ctx, obj, client.DryRunAll); err != nil {
					t.Errorf("the account may not create %s %s: %v", obj.GetKind(), obj.GetName(), err)
				}
				obj.SetNamespace(other)
				if err := as.Create(ctx, obj, client.DryRunAll); !apierrors.IsForbidden(err) {
					t.Errorf("creating %s %s in another namespace: got %v, want Forbidden", obj.GetKind(), obj.GetName(), err)
				}
			}
			// What the kind's hooks declare they write, asked of the API
			// server's authorizer as the account.
			hooks, err := registry.Resolve(w.Hooks)
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range hooks {
				p, ok := h.(hook.Permissioner)
				if !ok {
					continue
				}
				for _, rule := range p.Rules() {
					for _, res := range rule.Resources {
						for _, verb := range rule.Verbs {
							review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
								ResourceAttributes: &authorizationv1.ResourceAttributes{
									Namespace: ns, Group: rule.APIGroups[0], Resource: res, Verb: verb}}}
							if err := as.Create(ctx, review); err != nil {
								t.Fatal(err)
							}
							if !review.Status.Allowed {
								t.Errorf("hook %s: the account may not %s %s", h.Name(), verb, res)
							}
						}
					}
				}
			}
		})
	}
}

// TestRun_RBACOutput checks the printed YAML: the optional reads commented
// under the Role, granted with --optional; a kind not served refused.
func TestRun_RBACOutput(t *testing.T) {
	tests := []struct {
		name        string
		args        []string
		wantErr     string
		wantSecrets bool // the Role grants get on Secrets
		wantComment bool // the optional reads are shown commented
		wantItems   int  // for json: the List's items
	}{
		{name: "optional reads commented", args: []string{"rbac", "webapp", "-n", "team-a"}, wantComment: true},
		{name: "optional reads granted", args: []string{"rbac", "WebApp", "-n", "team-a", "--optional"}, wantSecrets: true},
		{name: "plural with group", args: []string{"rbac", "webapps.webapp.my.domain", "-n", "team-a"}, wantComment: true},
		{name: "json", args: []string{"rbac", "database", "network", "-n", "team-a", "-o", "json"}, wantItems: 5},
		{name: "unknown kind", args: []string{"rbac", "gadget"}, wantErr: `kind "gadget" is not in the watches file`},
		{name: "bad output", args: []string{"rbac", "webapp", "-o", "table"}, wantErr: "use yaml or json"},
		{name: "no kind", args: []string{"rbac"}, wantErr: "name a kind"},
		{name: "bad account", args: []string{"rbac", "webapp", "--service-account", "Deployer"}, wantErr: "flag --service-account"},
		{name: "bad namespace", args: []string{"rbac", "webapp", "-n", "team_a"}, wantErr: "flag -n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := run(context.Background(), tt.args...)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.wantItems > 0 {
				var list unstructured.UnstructuredList
				if err := list.UnmarshalJSON([]byte(out)); err != nil {
					t.Fatalf("the output is not a List: %v\n%s", err, out)
				}
				if len(list.Items) != tt.wantItems {
					t.Errorf("the List has %d items, want %d (one ServiceAccount, a Role and RoleBinding per kind)", len(list.Items), tt.wantItems)
				}
				return
			}
			var role struct {
				Kind  string
				Rules []struct{ Resources, Verbs []string }
			}
			for _, doc := range strings.Split(out, "\n---\n") {
				if strings.Contains(doc, "\nkind: Role\n") {
					if err := yaml.Unmarshal([]byte(doc), &role); err != nil {
						t.Fatal(err)
					}
				}
			}
			if role.Kind != "Role" {
				t.Fatalf("no Role in the output:\n%s", out)
			}
			secrets := false
			for _, r := range role.Rules {
				secrets = secrets || strings.Contains(strings.Join(r.Resources, ","), "secrets")
			}
			if secrets != tt.wantSecrets {
				t.Errorf("the Role grants Secrets: %v, want %v", secrets, tt.wantSecrets)
			}
			if got := strings.Contains(out, "#   - secrets"); got != tt.wantComment {
				t.Errorf("optional Secret read commented: %v, want %v:\n%s", got, tt.wantComment, out)
			}
		})
	}
}

// impersonating returns a client acting as user.
func impersonating(t *testing.T, user string) client.Client {
	t.Helper()
	c := rest.CopyConfig(cfg)
	c.Impersonate = rest.ImpersonationConfig{UserName: user}
	as, err := client.New(c, client.Options{Scheme: k8s.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	return as
}
