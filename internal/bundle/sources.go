package bundle

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// crd is a CustomResourceDefinition of config/ and where it came from.
type crd struct {
	*apiextensionsv1.CustomResourceDefinition
	source object
}

// sources are the objects of config/ sorted by what the bundle makes of them.
type sources struct {
	// crds are owned by the CSV and copied into manifests/, in the order of config/.
	crds []crd
	// deployment is the manager, the CSV's install strategy.
	deployment *appsv1.Deployment
	// roles and clusterRoles hold each role's rules by name.
	roles, clusterRoles map[string][]rbacv1.PolicyRule
	// roleBindings and clusterRoleBindings become the CSV's permissions and clusterPermissions.
	roleBindings, clusterRoleBindings []binding
	// clusterRoleObjects are the ClusterRoles as config/ has them, in its order.
	clusterRoleObjects []object
	// samples are the custom resources of config/samples, the CSV's alm-examples.
	samples []object
}

// readSources reads config/default and config/samples under dir.
func readSources(dir string) (*sources, error) {
	objs, err := loadKustomization(filepath.Join(dir, "default"))
	if err != nil {
		return nil, err
	}
	src := &sources{roles: map[string][]rbacv1.PolicyRule{}, clusterRoles: map[string][]rbacv1.PolicyRule{}}
	for _, o := range objs {
		if err := src.add(o); err != nil {
			return nil, fmt.Errorf("%s: %s %s: %w", o.file, o.GetKind(), o.GetName(), err)
		}
	}
	if src.deployment == nil {
		return nil, fmt.Errorf("%s: no Deployment: the bundle installs the manager Deployment of config/manager", dir)
	}
	if src.samples, err = loadKustomization(filepath.Join(dir, "samples")); err != nil {
		return nil, err
	}
	return src, nil
}

// add files o under what the bundle makes of it.
func (s *sources) add(o object) error {
	switch o.GroupVersionKind().GroupKind().String() {
	case "CustomResourceDefinition.apiextensions.k8s.io":
		c := &apiextensionsv1.CustomResourceDefinition{}
		if err := convert(o, c); err != nil {
			return err
		}
		s.crds = append(s.crds, crd{CustomResourceDefinition: c, source: o})
	case "Deployment.apps":
		if s.deployment != nil {
			return fmt.Errorf("a second Deployment (the first is %s): a CSV here installs one manager", s.deployment.Name)
		}
		s.deployment = &appsv1.Deployment{}
		if err := convert(o, s.deployment); err != nil {
			return err
		}
		withoutWebhook(s.deployment)
	case "Role.rbac.authorization.k8s.io":
		r := &rbacv1.Role{}
		if err := convert(o, r); err != nil {
			return err
		}
		s.roles[r.Name] = r.Rules
	case "ClusterRole.rbac.authorization.k8s.io":
		r := &rbacv1.ClusterRole{}
		if err := convert(o, r); err != nil {
			return err
		}
		s.clusterRoles[r.Name] = r.Rules
		s.clusterRoleObjects = append(s.clusterRoleObjects, o)
	case "RoleBinding.rbac.authorization.k8s.io":
		b := &rbacv1.RoleBinding{}
		if err := convert(o, b); err != nil {
			return err
		}
		s.roleBindings = append(s.roleBindings, binding{name: "RoleBinding " + b.Name, role: b.RoleRef, subjects: b.Subjects})
	case "ClusterRoleBinding.rbac.authorization.k8s.io":
		b := &rbacv1.ClusterRoleBinding{}
		if err := convert(o, b); err != nil {
			return err
		}
		s.clusterRoleBindings = append(s.clusterRoleBindings, binding{name: "ClusterRoleBinding " + b.Name, role: b.RoleRef, subjects: b.Subjects})
	case "ValidatingWebhookConfiguration.admissionregistration.k8s.io", "Service", "Secret":
		if o.GetLabels()["app.kubernetes.io/component"] != "webhook" {
			return fmt.Errorf("the bundle cannot carry this kind; add it to internal/bundle or keep it out of config/default")
		}
		// The admission webhook is left out of the bundle (withoutWebhook).
	case "Namespace", "ServiceAccount":
		// OLM makes both: the operator runs in the namespace it is installed into, and it creates each
		// service account that the CSV's permissions name.
	default:
		return fmt.Errorf("the bundle cannot carry this kind; add it to internal/bundle or keep it out of config/default")
	}
	return nil
}

// unboundClusterRoles are the ClusterRoles of config/ that no binding of it grants, such as the metrics reader
// for whoever scrapes the manager: the CSV's permissions cannot carry them, so the bundle carries each in a
// manifest of its own, which OLM creates as it is (as operator-sdk's bundles carry the metrics reader).
func (s *sources) unboundClusterRoles() []object {
	bound := map[string]bool{}
	for _, b := range slices.Concat(s.roleBindings, s.clusterRoleBindings) {
		if b.role.Kind == "ClusterRole" {
			bound[b.role.Name] = true
		}
	}
	var out []object
	for _, o := range s.clusterRoleObjects {
		if !bound[o.GetName()] {
			out = append(out, o)
		}
	}
	return out
}

// binding is a RoleBinding or a ClusterRoleBinding.
type binding struct {
	// name is the binding's kind and name, for messages.
	name     string
	role     rbacv1.RoleRef
	subjects []rbacv1.Subject
}

// rules returns the rules of the role ref names, and whether config/ has that role.
func (s *sources) rules(ref rbacv1.RoleRef) ([]rbacv1.PolicyRule, bool) {
	roles := s.roles
	if ref.Kind == "ClusterRole" {
		roles = s.clusterRoles
	}
	rules, ok := roles[ref.Name]
	return rules, ok
}

// convert decodes o into the typed obj, refusing fields obj's type does not have.
func convert(o object, obj any) error {
	return runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(o.Object, obj, true)
}

// withoutWebhook turns the admission webhook of config/manager off in d: OLM
// gives a CSV's webhooks certificates of its own (webhookdefinitions), while
// config/ has the manager make its own and keep its configuration's CA, which
// the bundle does not carry. An OLM install checks specs at reconcile only.
func withoutWebhook(d *appsv1.Deployment) {
	for i := range d.Spec.Template.Spec.Containers {
		c := &d.Spec.Template.Spec.Containers[i]
		c.Args = slices.DeleteFunc(c.Args, func(a string) bool { return strings.HasPrefix(a, "--webhook") })
		c.Ports = slices.DeleteFunc(c.Ports, func(p corev1.ContainerPort) bool { return p.Name == "webhook" })
	}
}
