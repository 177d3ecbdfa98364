//go:build e2e

package e2e

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
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

// newFleet names n WebApps spread round-robin over nss. When the test ends
// it deletes them, before their namespaces go (nss must be made first).
func newFleet(t *testing.T, nss []string, n int) *fleet {
	f := &fleet{t: t, nss: nss, names: map[string][]string{}, n: n}
	for i := range n {
		ns := nss[i%len(nss)]
		f.names[ns] = append(f.names[ns], fmt.Sprintf("web-%04d", i))
	}
	t.Cleanup(f.delete)
	return f
}

// delete deletes the fleet's WebApps and waits until rudder has uninstalled
// them all, as long as an install may take: the namespaces' own deletion
// waits minutes, not what thousands of uninstalls take.
func (f *fleet) delete() {
	f.t.Helper()
	if err := f.eachNamespace(func(ns string) error {
		_, err := run("kubectl", "delete", "webapps", "--all", "-n", ns, "--wait=false")
		return err
	}); err != nil {
		f.t.Errorf("cleanup: %v", err)
	}
	eventuallyEvery(f.t, f.timeout(), f.pollEvery(), fmt.Sprintf("%d WebApps deleted", f.n), func() error {
		var apps struct{ Items []webApp }
		if _, err := getJSON(&apps, "webapps", "-A"); err != nil {
			return err
		}
		left := 0
		for _, a := range apps.Items {
			if slices.Contains(f.nss, a.Metadata.Namespace) {
				left++
			}
		}
		if left > 0 {
			return fmt.Errorf("%d of the fleet's WebApps left", left)
		}
		return nil
	})
}

// apply creates the WebApps, or sets their image: a server-side apply of
// one manifest per namespace (one kubectl for thousands of WebApps outlasts
// commandTimeout while rudder works).
func (f *fleet) apply(image string) {
	f.t.Helper()
	dir := f.t.TempDir()
	for _, ns := range f.nss {
		var b strings.Builder
		for _, name := range f.names[ns] {
			fmt.Fprintf(&b, "---\napiVersion: webapp.my.domain/v1\nkind: WebApp\nmetadata:\n  name: %s\n  namespace: %s\nspec:\n  image: %s\n  replicas: 1\n  port: 80\n", name, ns, image)
		}
		if err := os.WriteFile(filepath.Join(dir, ns+".yaml"), []byte(b.String()), 0o600); err != nil {
			f.t.Fatal(err)
		}
	}
	if err := f.eachNamespace(func(ns string) error {
		_, err := run("kubectl", "apply", "--server-side", "--field-manager=e2e-fleet", "-f", filepath.Join(dir, ns+".yaml"))
		return err
	}); err != nil {
		f.t.Fatal(err)
	}
}

// eachNamespace calls do for each of the fleet's namespaces, four at a
// time, and returns their errors joined.
func (f *fleet) eachNamespace(do func(ns string) error) error {
	errs := make([]error, len(f.nss))
	slots := make(chan struct{}, 4)
	var wg sync.WaitGroup
	for i, ns := range f.nss {
		wg.Go(func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			errs[i] = do(ns)
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// timeout is how long the fleet may take to converge: generous, growing with its size.
func (f *fleet) timeout() time.Duration {
	return 2*time.Minute + time.Duration(f.n)*200*time.Millisecond
}

// pollEvery is how long to wait between two checks of the fleet, each of
// which lists all of it: a second per 500 WebApps.
func (f *fleet) pollEvery() time.Duration {
	return max(pollInterval, time.Duration(f.n/500)*time.Second)
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
// deployed. It lists the WebApps first, and the heavier Deployments and
// storage Secrets only once every WebApp says it is Running.
func (f *fleet) converged(image string) error {
	var apps struct{ Items []webApp }
	if _, err := getJSON(&apps, "webapps", "-A"); err != nil {
		return err
	}
	running := map[string]bool{}
	for _, a := range apps.Items {
		running[a.Metadata.Namespace+"/"+a.Metadata.Name] = a.Status.Phase == "Running" && a.Status.ObservedGeneration == a.Metadata.Generation
	}
	if err := f.behind("Running at their generation", func(ns, name string) bool { return running[ns+"/"+name] }); err != nil {
		return err
	}
	var deps appsv1.DeploymentList
	if _, err := getJSON(&deps, "deployments", "-A"); err != nil {
		return err
	}
	onImage := map[string]bool{}
	for _, d := range deps.Items {
		onImage[d.Namespace+"/"+d.Name] = d.Spec.Template.Spec.Containers[0].Image == image && d.Status.ReadyReplicas == 1
	}
	if err := f.behind("with their Deployment ready on "+image, func(ns, name string) bool { return onImage[ns+"/"+name] }); err != nil {
		return err
	}
	revs, err := f.newest()
	if err != nil {
		return err
	}
	return f.behind("with their newest revision deployed", func(ns, name string) bool {
		return revs[ns+"/"+releaseName(name)].status == "deployed"
	})
}

// behind names the fleet's WebApps for which ok is false, as an error.
func (f *fleet) behind(what string, ok func(ns, name string) bool) error {
	var behind []string
	for ns, names := range f.names {
		for _, name := range names {
			if !ok(ns, name) {
				behind = append(behind, ns+"/"+name)
			}
		}
	}
	if len(behind) == 0 {
		return nil
	}
	sort.Strings(behind)
	return fmt.Errorf("%d of %d WebApps not yet %s, e.g. %s", len(behind), f.n, what, strings.Join(behind[:min(len(behind), 5)], ", "))
}

// waitConverged waits until the fleet has converged on image.
func (f *fleet) waitConverged(image string) {
	f.t.Helper()
	eventuallyEvery(f.t, f.timeout(), f.pollEvery(), fmt.Sprintf("%d WebApps on %s", f.n, image), func() error { return f.converged(image) })
}
