package bundle

import (
	"fmt"
	"maps"
	"slices"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
)

// managerContainer is the container of config/manager's Deployment that runs rudder.
const managerContainer = "manager"

// targetNamespaces is the annotation OLM puts on the operator's pods: the namespaces of its OperatorGroup,
// comma-separated, or empty for all namespaces, which is what WATCH_NAMESPACE means to rudder.
const targetNamespaces = "olm.targetNamespaces"

// installStrategy is config/'s manager Deployment and RBAC as OLM installs them.
func installStrategy(src *sources, image string) (operatorsv1alpha1.NamedInstallStrategy, error) {
	deployment, err := installDeployment(src, image)
	if err != nil {
		return operatorsv1alpha1.NamedInstallStrategy{}, err
	}
	// Permissions hold in the operator's namespace, clusterPermissions everywhere.
	namespaced, err := permissions(src, src.roleBindings)
	if err != nil {
		return operatorsv1alpha1.NamedInstallStrategy{}, err
	}
	clusterWide, err := permissions(src, src.clusterRoleBindings)
	if err != nil {
		return operatorsv1alpha1.NamedInstallStrategy{}, err
	}
	// OLM creates only the service accounts that the permissions name.
	account := deployment.Spec.Template.Spec.ServiceAccountName
	bound := func(g operatorsv1alpha1.StrategyDeploymentPermissions) bool { return g.ServiceAccountName == account }
	if !slices.ContainsFunc(namespaced, bound) && !slices.ContainsFunc(clusterWide, bound) {
		return operatorsv1alpha1.NamedInstallStrategy{}, fmt.Errorf("the Deployment %s runs as service account %q, which no binding of config/default grants anything, so OLM would not create it", deployment.Name, account)
	}
	return operatorsv1alpha1.NamedInstallStrategy{
		StrategyName: operatorsv1alpha1.InstallStrategyNameDeployment,
		StrategySpec: operatorsv1alpha1.StrategyDetailsDeployment{
			DeploymentSpecs:    []operatorsv1alpha1.StrategyDeploymentSpec{deployment},
			Permissions:        namespaced,
			ClusterPermissions: clusterWide,
		},
	}, nil
}

// installDeployment is the manager Deployment with the image set, and WATCH_NAMESPACE taken from the
// OperatorGroup's target namespaces, so that each install mode limits rudder to the namespaces it names.
func installDeployment(src *sources, image string) (operatorsv1alpha1.StrategyDeploymentSpec, error) {
	d := src.deployment.DeepCopy()
	var c *corev1.Container
	for i := range d.Spec.Template.Spec.Containers {
		if d.Spec.Template.Spec.Containers[i].Name == managerContainer {
			c = &d.Spec.Template.Spec.Containers[i]
		}
	}
	if c == nil {
		return operatorsv1alpha1.StrategyDeploymentSpec{}, fmt.Errorf("the Deployment %s has no container %q to install", d.Name, managerContainer)
	}
	c.Image = image
	if !slices.ContainsFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == "WATCH_NAMESPACE" }) {
		return operatorsv1alpha1.StrategyDeploymentSpec{}, fmt.Errorf("container %q of Deployment %s sets no WATCH_NAMESPACE for the bundle to take from %s", managerContainer, d.Name, targetNamespaces)
	}
	setEnv(c, fieldEnv("WATCH_NAMESPACE", "metadata.annotations['"+targetNamespaces+"']"))
	// The user's guide's CSV also gives the pod its name and the operator's, the
	// variables operator-sdk's libraries read; rudder itself does not need them.
	setEnv(c, fieldEnv("POD_NAME", "metadata.name"))
	setEnv(c, corev1.EnvVar{Name: "OPERATOR_NAME", Value: d.Name})
	// OLM, not kustomize, manages what it installs.
	labels := maps.Clone(d.Labels)
	delete(labels, "app.kubernetes.io/managed-by")
	return operatorsv1alpha1.StrategyDeploymentSpec{Name: d.Name, Label: labels, Spec: d.Spec}, nil
}

// setEnv sets the variable e of c, in its place if c has it already, or else last.
func setEnv(c *corev1.Container, e corev1.EnvVar) {
	if i := slices.IndexFunc(c.Env, func(old corev1.EnvVar) bool { return old.Name == e.Name }); i >= 0 {
		c.Env[i] = e
		return
	}
	c.Env = append(c.Env, e)
}

// fieldEnv is the variable name set from the pod's field fieldPath.
func fieldEnv(name, fieldPath string) corev1.EnvVar {
	return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: fieldPath}}}
}

// permissions are the rules that bindings grant, by service account in the order the accounts are first
// bound. OLM binds rules only to the service accounts of the CSV, and only rules the CSV spells out: a binding
// to anything else is an error.
func permissions(src *sources, bindings []binding) ([]operatorsv1alpha1.StrategyDeploymentPermissions, error) {
	var p []operatorsv1alpha1.StrategyDeploymentPermissions
	for _, b := range bindings {
		rules, ok := src.rules(b.role)
		if !ok {
			return nil, fmt.Errorf("%s: %s %s is not in config/default, so the bundle cannot say what it grants", b.name, b.role.Kind, b.role.Name)
		}
		for _, s := range b.subjects {
			if s.Kind != rbacv1.ServiceAccountKind {
				return nil, fmt.Errorf("%s: subject %s %s: OLM binds roles to the operator's service accounts only", b.name, s.Kind, s.Name)
			}
			i := slices.IndexFunc(p, func(g operatorsv1alpha1.StrategyDeploymentPermissions) bool { return g.ServiceAccountName == s.Name })
			if i < 0 {
				i = len(p)
				p = append(p, operatorsv1alpha1.StrategyDeploymentPermissions{ServiceAccountName: s.Name})
			}
			p[i].Rules = append(p[i].Rules, rules...)
		}
	}
	return p, nil
}
