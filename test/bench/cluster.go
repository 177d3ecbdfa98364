package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/client/config"

	"github.com/rudder-operator/rudder/test/testenv"
)

// Fake nodes the bench adds when the cluster lacks room for a run's pods.
// Like hack/cluster-up.sh's, each gets a /20 of podCIDRPrefix.0.0/16, so at
// most 16 nodes in all; a /20 holds 4094 pod addresses.
const (
	podCIDRPrefix   = "10.244"
	maxKwokNodes    = 16
	benchNodePods   = 4000
	benchNodePrefix = "kwok-bench-node-"
)

// newClient returns a client of the cluster in KUBECONFIG, with no client-side
// rate limit (controller-runtime's default, as the operators have).
func newClient() (client.Client, error) {
	if os.Getenv("KUBECONFIG") == "" {
		return nil, fmt.Errorf("KUBECONFIG is not set: run `make bench` (or hack/e2e.sh), which points it at the local cluster")
	}
	cfg, err := ctrlconfig.GetConfig()
	if err != nil {
		return nil, err
	}
	return client.New(cfg, client.Options{Scheme: scheme.Scheme})
}

// installCRDs applies rudder's CRDs with the repository's kubectl and the
// baseline's, derived from rudder's WebApp CRD, with server-side apply, and
// waits until both WebApp CRDs are Established. It returns the name of the
// baseline's CRD.
func installCRDs(ctx context.Context, c client.Client, root string) (string, error) {
	kubectl := filepath.Join(root, "bin", "kubectl")
	if out, err := exec.CommandContext(ctx, kubectl, "apply", "-f", filepath.Join(root, "config", "crd", "bases")).CombinedOutput(); err != nil {
		return "", fmt.Errorf("kubectl apply rudder's CRDs: %w\n%s", err, out)
	}
	data, err := os.ReadFile(filepath.Join(root, rudderCRDFile))
	if err != nil {
		return "", err
	}
	crd, err := baselineCRD(data, baselineWebApp.Group)
	if err != nil {
		return "", err
	}
	if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(crd), client.FieldOwner("bench"), client.ForceOwnership); err != nil {
		return "", fmt.Errorf("applying the baseline's CRD: %w", err)
	}
	for _, name := range []string{"webapps." + rudderWebApp.Group, crd.GetName()} {
		_, err := waitFor(ctx, time.Now(), 2*time.Minute, "CRD "+name+" Established", func(ctx context.Context) (bool, string, error) {
			return crdEstablished(ctx, c, name)
		})
		if err != nil {
			return "", err
		}
	}
	return crd.GetName(), nil
}

// removeBaselineCRD deletes the baseline's CRD once no baseline WebApp is
// left, so that a cluster the bench ran on serves one WebApp kind again (the
// seed's `kubectl api-resources | grep webapp` shows one line). One left
// (a failed run, its finalizer unremoved) keeps it, and says so.
func removeBaselineCRD(c client.Client, name string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	left := &unstructured.UnstructuredList{}
	left.SetGroupVersionKind(baselineWebApp.GroupVersion().WithKind(baselineWebApp.Kind + "List"))
	if err := c.List(ctx, left); err != nil || len(left.Items) > 0 {
		fmt.Fprintf(os.Stderr, "bench: keeping the baseline's CRD: %d baseline WebApps left (err %v)\n", len(left.Items), err)
		return
	}
	crd := &unstructured.Unstructured{}
	crd.SetAPIVersion("apiextensions.k8s.io/v1")
	crd.SetKind("CustomResourceDefinition")
	crd.SetName(name)
	if err := c.Delete(ctx, crd); client.IgnoreNotFound(err) != nil {
		fmt.Fprintf(os.Stderr, "bench: deleting the baseline's CRD: %v\n", err)
	}
}

func crdEstablished(ctx context.Context, c client.Client, name string) (bool, string, error) {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("apiextensions.k8s.io/v1")
	u.SetKind("CustomResourceDefinition")
	if err := c.Get(ctx, client.ObjectKey{Name: name}, u); err != nil {
		return false, "", err
	}
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, cond := range conds {
		m, _ := cond.(map[string]any)
		if m["type"] == "Established" && m["status"] == "True" {
			return true, "Established", nil
		}
	}
	return false, "not Established yet", nil
}

// ensurePodRoom makes room for pods more pods on the kwok nodes, adding
// nodes (annotated for kwok as hack/cluster-up.sh's are) when the free pod
// capacity falls short. It returns the free capacity afterwards, which is
// less than pods only when the node or address limit was reached.
func ensurePodRoom(ctx context.Context, c client.Client, pods int) (int, error) {
	var nodes corev1.NodeList
	if err := c.List(ctx, &nodes, client.MatchingLabels{"type": "kwok"}); err != nil {
		return 0, err
	}
	var all corev1.PodList
	if err := c.List(ctx, &all); err != nil {
		return 0, err
	}
	used := 0
	for _, p := range all.Items {
		if p.Spec.NodeName != "" && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
			used++
		}
	}
	capacity := 0
	cidrs := map[string]bool{}
	for _, n := range nodes.Items {
		capacity += int(n.Status.Allocatable.Pods().Value())
		cidrs[n.Spec.PodCIDR] = true
	}
	// Room for the run and a margin for pods that are still being deleted.
	want := pods + pods/10 + 20
	added := 0
	for i := 0; capacity-used < want && i < maxKwokNodes; i++ {
		cidr := fmt.Sprintf("%s.%d.0/20", podCIDRPrefix, i*16)
		if cidrs[cidr] {
			continue
		}
		if err := c.Create(ctx, kwokNode(benchNodePrefix+strconv.Itoa(i), cidr)); err != nil {
			return capacity - used, fmt.Errorf("adding a kwok node: %w", err)
		}
		cidrs[cidr] = true
		capacity += benchNodePods
		added++
		fmt.Fprintf(os.Stderr, "bench: added kwok node %s%d (%d pods) for room\n", benchNodePrefix, i, benchNodePods)
	}
	if added > 0 {
		_, err := waitFor(ctx, time.Now(), 3*time.Minute, "kwok nodes Ready", func(ctx context.Context) (bool, string, error) {
			return kwokNodesReady(ctx, c, len(nodes.Items)+added)
		})
		if err != nil {
			return capacity - used, err
		}
	}
	return capacity - used, nil
}

// kwokNodesReady reports whether n kwok nodes are Ready.
func kwokNodesReady(ctx context.Context, c client.Client, n int) (bool, string, error) {
	var nodes corev1.NodeList
	if err := c.List(ctx, &nodes, client.MatchingLabels{"type": "kwok"}); err != nil {
		return false, "", err
	}
	ready := 0
	for _, node := range nodes.Items {
		for _, cond := range node.Status.Conditions {
			if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue {
				ready++
			}
		}
	}
	return ready >= n, fmt.Sprintf("%d/%d kwok nodes Ready", ready, n), nil
}

// kwokNode is a fake node kwok manages, as hack/cluster-up.sh creates them.
func kwokNode(name, cidr string) *corev1.Node {
	list := corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("64"), corev1.ResourceMemory: resource.MustParse("256Gi"),
		corev1.ResourcePods: *resource.NewQuantity(benchNodePods, resource.DecimalSI), corev1.ResourceEphemeralStorage: resource.MustParse("1Ti"),
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Annotations: map[string]string{"kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0"},
			Labels: map[string]string{
				"type": "kwok", "kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
			},
		},
		Spec:   corev1.NodeSpec{PodCIDR: cidr, PodCIDRs: []string{cidr}},
		Status: corev1.NodeStatus{Capacity: list, Allocatable: list},
	}
}

// newNamespace creates a fresh namespace for a column.
func newNamespace(ctx context.Context, c client.Client, column string) (string, error) {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "bench-" + column + "-"}}
	if err := c.Create(ctx, ns); err != nil {
		return "", err
	}
	return ns.Name, nil
}

// createNamespace creates namespace ns.
func createNamespace(ctx context.Context, c client.Client, ns string) error {
	return c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
}

// deleteNamespaceNoWait starts the deletion of ns.
func deleteNamespaceNoWait(ctx context.Context, c client.Client, ns string) error {
	obj := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}
	return client.IgnoreNotFound(c.Delete(ctx, obj))
}

// deleteNamespace deletes ns and waits until it is gone, so that the next
// column finds the cluster as this one did.
func deleteNamespace(ctx context.Context, c client.Client, ns string) error {
	return deleteNamespaceWithin(ctx, c, ns, 10*time.Minute)
}

// deleteNamespaceWithin is deleteNamespace waiting at most timeout.
func deleteNamespaceWithin(ctx context.Context, c client.Client, ns string, timeout time.Duration) error {
	if err := deleteNamespaceNoWait(ctx, c, ns); err != nil {
		return err
	}
	obj := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}
	_, err := waitFor(ctx, time.Now(), timeout, "namespace "+ns+" deleted", func(ctx context.Context) (bool, string, error) {
		err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj)
		if client.IgnoreNotFound(err) != nil {
			return false, "", err
		}
		return err != nil, "still terminating", nil
	})
	return err
}

// managerRun is what a one-kind bench of bin/manager needs: a client of
// the cluster, the manager binary and a directory for its logs.
type managerRun struct {
	c      client.Client
	bin    string
	logDir string
	// done removes the baseline's CRD that setting up installed.
	done func()
}

// setUpManagerRun installs the CRDs, makes room for pods of n WebApps of one
// replica (env names the setting that chooses n) and finds bin/manager; its
// logs go to a new directory named for the bench.
func setUpManagerRun(ctx context.Context, n int, env, bench string) (*managerRun, error) {
	root, err := testenv.Root()
	if err != nil {
		return nil, err
	}
	c, err := newClient()
	if err != nil {
		return nil, err
	}
	crdName, err := installCRDs(ctx, c, root)
	if err != nil {
		return nil, err
	}
	r := &managerRun{c: c, done: func() { removeBaselineCRD(c, crdName) }}
	fail := func(err error) (*managerRun, error) {
		r.done()
		return nil, err
	}
	if room, err := ensurePodRoom(ctx, c, n); err != nil {
		return fail(err)
	} else if room < n {
		return fail(fmt.Errorf("the cluster has room for %d more pods, not the %d of %d WebApps: "+
			"start it with more kwok nodes (RUDDER_KWOK_NODES) or run fewer WebApps (%s)", room, n, n, env))
	}
	if r.bin, err = binary(envManager, root, "manager", "build"); err != nil {
		return fail(err)
	}
	if r.logDir, err = os.MkdirTemp("", "rudder-"+bench+"-"); err != nil {
		return fail(err)
	}
	return r, nil
}
