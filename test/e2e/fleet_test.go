//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
)

// fleet is many WebApps of one replica spread over namespaces, driven and
// checked with a few cluster-wide calls rather than several per WebApp: at
// thousands, one kubectl per WebApp takes longer than rudder does.
type fleet struct {
	t   *testing.T
	nss []string
	// names of the WebApps, by namespace.
	names map[string][]string
	n     int
}

// newFleet names n WebApps spread round-robin over nss.
func newFleet(t *testing.T, nss []string, n int) *fleet {
	f := &fleet{t: t, nss: nss, names: map[string][]string{}, n: n}
	for i := range n {
		ns := nss[i%len(nss)]
		f.names[ns] = append(f.names[ns], fmt.Sprintf("web-%04d", i))
	}
	return f
}

// apply creates the WebApps, or sets their image: one server-side apply of
// one manifest holding them all.
func (f *fleet) apply(image string) {
	f.t.Helper()
	var b strings.Builder
	for _, ns := range f.nss {
		for _, name := range f.names[ns] {
			fmt.Fprintf(&b, "---\napiVersion: webapp.my.domain/v1\nkind: WebApp\nmetadata:\n  name: %s\n  namespace: %s\nspec:\n  image: %s\n  replicas: 1\n  port: 80\n", name, ns, image)
		}
	}
	file := filepath.Join(f.t.TempDir(), "fleet.yaml")
	if err := os.WriteFile(file, []byte(b.String()), 0o600); err != nil {
		f.t.Fatal(err)
	}
	kubectl(f.t, "apply", "--server-side", "--field-manager=e2e-fleet", "-f", file)
}

// timeout is how long the fleet may take to converge: generous, growing with its size.
func (f *fleet) timeout() time.Duration {
	return 2*time.Minute + time.Duration(f.n)*200*time.Millisecond
}

// revision is a release's newest revision, from its storage Secret's labels.
type revision struct {
	version        int
	status, holder string
}

// newest returns the newest revision of every release in the fleet's
// namespaces, by namespace/release.
func (f *fleet) newest() (map[string]revision, error) {
	out, err := run("kubectl", "get", "secrets", "-A", "-l", "owner=helm", "-o",
		`jsonpath={range .items[*]}{.metadata.namespace}/{.metadata.labels.name} {.metadata.labels.version} {.metadata.labels.status} {.metadata.labels.rudder\.dev/holder}{"\n"}{end}`)
	if err != nil {
		return nil, err
	}
	revs := map[string]revision{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		fields := strings.Fields(line)
		if len(fields) < 3 {
			continue
		}
		v, _ := strconv.Atoi(fields[1])
		r := revision{version: v, status: fields[2]}
		if len(fields) > 3 {
			r.holder = fields[3]
		}
		if v >= revs[fields[0]].version {
			revs[fields[0]] = r
		}
	}
	return revs, nil
}

// converged says how far the fleet is from every WebApp Running at its
// generation on image, with its Deployment on image and its newest revision
// deployed.
func (f *fleet) converged(image string) error {
	var apps struct{ Items []webApp }
	var deps appsv1.DeploymentList
	if _, err := getJSON(&apps, "webapps", "-A"); err != nil {
		return err
	}
	if _, err := getJSON(&deps, "deployments", "-A"); err != nil {
		return err
	}
	revs, err := f.newest()
	if err != nil {
		return err
	}
	running, onImage := map[string]bool{}, map[string]bool{}
	for _, a := range apps.Items {
		running[a.Metadata.Namespace+"/"+a.Metadata.Name] = a.Status.Phase == "Running" && a.Status.ObservedGeneration == a.Metadata.Generation
	}
	for _, d := range deps.Items {
		onImage[d.Namespace+"/"+d.Name] = d.Spec.Template.Spec.Containers[0].Image == image && d.Status.ReadyReplicas == 1
	}
	var behind []string
	for ns, names := range f.names {
		for _, name := range names {
			key := ns + "/" + name
			if !running[key] || !onImage[key] || revs[ns+"/"+releaseName(name)].status != "deployed" {
				behind = append(behind, key)
			}
		}
	}
	if len(behind) > 0 {
		sort.Strings(behind)
		return fmt.Errorf("%d of %d WebApps not yet Running on %s with their newest revision deployed, e.g. %s",
			len(behind), f.n, image, strings.Join(behind[:min(len(behind), 5)], ", "))
	}
	return nil
}

// waitConverged waits until the fleet has converged on image.
func (f *fleet) waitConverged(image string) {
	f.t.Helper()
	eventuallyWithin(f.t, f.timeout(), fmt.Sprintf("%d WebApps on %s", f.n, image), func() error { return f.converged(image) })
}
