//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

// crashNamespace holds the WebApps of the crash test, and nothing else.
const crashNamespace = "rudder-crash"

// crashApp is what the crash test last asked of one WebApp.
type crashApp struct {
	name     string
	image    string
	replicas int
	deleted  bool
}

// TestCrash_KillDuringOperations is issue 5's crash test: the manager is
// killed with SIGKILL at random moments of a wave of installs, upgrades,
// rollbacks and uninstalls, and started again, at least 20 times
// (RUDDER_CRASH_KILLS for more; RUDDER_CRASH_SEED replays a run's random
// choices). Afterwards no release may be pending and
// every WebApp must match its spec, with its Helm release, its Deployment and
// its status agreeing.
func TestCrash_KillDuringOperations(t *testing.T) {
	t.Parallel() // its own operator over its own namespace
	kills := 20
	if s := os.Getenv("RUDDER_CRASH_KILLS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("RUDDER_CRASH_KILLS=%q: want a whole number of kills", s)
		}
		kills = n
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("RUDDER_CRASH_SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("RUDDER_CRASH_SEED=%q: want the seed a failed run printed", s)
		}
		seed = n
	}
	t.Logf("random seed %d (kills %d); RUDDER_CRASH_SEED=%d replays this run's choices", seed, kills, seed)
	rng := rand.New(rand.NewPCG(seed, seed>>7))

	op := privateOperator(t, crashNamespace)
	t.Cleanup(func() {
		op.ensureRunning(t) // the WebApps' finalizers need a manager
		cleanCrashNamespace(t)
	})

	w := &crashWave{t: t, rng: rng, dir: t.TempDir()}
	for range 4 {
		w.create()
	}
	pendingAfterKill, inFlight, kinds := 0, 0, map[string]int{}
	for i := range kills {
		logged := op.logSize(t)
		for range 1 + rng.IntN(3) {
			kinds[w.operate()]++
		}
		// Two kills in three aim at an operation in flight: as soon as the
		// manager logs that it plans a Helm action, before a random
		// deadline; the others land at the deadline, wherever rudder is.
		deadline := time.Now().Add(time.Duration(rng.IntN(1500)) * time.Millisecond)
		if aim := rng.IntN(3) > 0; aim {
			for time.Now().Before(deadline) && !plansHelmAction(op.logSince(t, logged)) {
				time.Sleep(5 * time.Millisecond)
			}
		} else {
			time.Sleep(time.Until(deadline))
		}
		op.kill(t)
		if helmActionsInFlight(op.logSince(t, logged)) > 0 {
			inFlight++
		}
		pending := pendingReleases(t, crashNamespace)
		if len(pending) > 0 {
			pendingAfterKill++
			t.Logf("kill %d: left pending: %v", i+1, pending)
		}
		op.startAgain(t)
	}
	t.Logf("%d kills, %d of them during a Helm action, %d leaving a release pending; operations: %v", kills, inFlight, pendingAfterKill, kinds)
	// The test is of crashes in flight: with two kills in three aimed at a
	// Helm action, some must have landed in one, or it proved nothing.
	if inFlight == 0 {
		t.Fatalf("none of %d kills landed on an operation in flight (seed %d): the test did not test crashes mid-operation", kills, seed)
	}

	// The wave is over: leave every rollback, so that each WebApp must end on its spec.
	for _, a := range w.apps {
		if !a.deleted {
			_, _ = run("kubectl", "annotate", "webapp", a.name, "-n", crashNamespace, "rudder.dev/rollback-to-")
		}
	}
	eventuallyWithin(t, 5*time.Minute, "every WebApp to match its spec, no release pending", func() error {
		if p := pendingReleases(t, crashNamespace); len(p) > 0 {
			return fmt.Errorf("pending releases %v", p)
		}
		for _, a := range w.apps {
			if err := a.converged(t); err != nil {
				return err
			}
		}
		return nil
	})
	live := 0
	for _, a := range w.apps {
		if !a.deleted {
			live++
			checkBoundedHistory(t, a.name)
		}
	}
	t.Logf("converged: %d WebApps live, %d uninstalled; helm list --pending is empty", live, len(w.apps)-live)
}

// crashWave makes the operations of the crash test.
type crashWave struct {
	t    *testing.T
	rng  *rand.Rand
	dir  string
	apps []*crashApp
	next int
}

// operate runs one random operation and returns its kind.
func (w *crashWave) operate() string {
	live := w.live()
	n := w.rng.IntN(10)
	switch {
	case len(live) == 0 || n == 0:
		w.create()
		return "install"
	case n <= 5:
		a := live[w.rng.IntN(len(live))]
		a.image = fmt.Sprintf("nginx:1.%d", 20+w.rng.IntN(8))
		a.replicas = 1 + w.rng.IntN(3)
		kubectl(w.t, "patch", "webapp", a.name, "-n", crashNamespace, "--type", "merge",
			"-p", fmt.Sprintf(`{"spec":{"image":%q,"replicas":%d}}`, a.image, a.replicas))
		return "upgrade"
	case n <= 8:
		a := live[w.rng.IntN(len(live))]
		rev, _ := run("kubectl", "get", "webapp", a.name, "-n", crashNamespace, "-o", "jsonpath={.status.release.revision}")
		if r, err := strconv.Atoi(strings.TrimSpace(rev)); err == nil && r > 1 {
			kubectl(w.t, "annotate", "webapp", a.name, "-n", crashNamespace, "--overwrite",
				fmt.Sprintf("rudder.dev/rollback-to=%d", r-1))
			return "rollback"
		}
		return "rollback (none yet)"
	default:
		a := live[w.rng.IntN(len(live))]
		kubectl(w.t, "delete", "webapp", a.name, "-n", crashNamespace, "--wait=false")
		a.deleted = true
		return "uninstall"
	}
}

// create installs a new WebApp; names are never reused.
func (w *crashWave) create() {
	a := &crashApp{name: fmt.Sprintf("crash-%d", w.next), image: "nginx:1.25", replicas: 1 + w.rng.IntN(3)}
	w.next++
	w.apps = append(w.apps, a)
	manifest := fmt.Sprintf(`apiVersion: webapp.my.domain/v1
kind: WebApp
metadata:
  name: %s
  namespace: %s
spec:
  image: %s
  replicas: %d
  port: 80
`, a.name, crashNamespace, a.image, a.replicas)
	file := filepath.Join(w.dir, a.name+".yaml")
	if err := os.WriteFile(file, []byte(manifest), 0o600); err != nil {
		w.t.Fatal(err)
	}
	kubectl(w.t, "apply", "-f", file)
}

func (w *crashWave) live() []*crashApp {
	var out []*crashApp
	for _, a := range w.apps {
		if !a.deleted {
			out = append(out, a)
		}
	}
	return out
}

// converged says how WebApp a differs from what was last asked of it.
func (a *crashApp) converged(t *testing.T) error {
	t.Helper()
	release := releaseName(a.name)
	var wa webApp
	found, err := getJSON(&wa, "webapp", a.name, "-n", crashNamespace)
	if err != nil {
		return err
	}
	if a.deleted {
		if found {
			return fmt.Errorf("WebApp %s still exists after its delete", a.name)
		}
		if out, _ := run("helm", "status", release, "-n", crashNamespace); out != "" {
			return fmt.Errorf("release %s of deleted WebApp %s still exists", release, a.name)
		}
		return nil
	}
	if !found {
		return fmt.Errorf("WebApp %s is missing", a.name)
	}
	gen, st := wa.Metadata.Generation, wa.Status
	if st.ObservedGeneration != gen || st.Phase != phaseRunning || st.ReadyReplicas != int32(a.replicas) {
		return fmt.Errorf("WebApp %s: generation %d observed %d, phase %q, %d ready of %d wanted (%s)",
			a.name, gen, st.ObservedGeneration, st.Phase, st.ReadyReplicas, a.replicas, st.Message)
	}
	// The deployed revision serves; a newer failed one (an operation a kill
	// cut short, unlocked) may follow it in history, as after a failed helm
	// upgrade.
	if st.Release == nil || st.Release.Status != "deployed" {
		return fmt.Errorf("WebApp %s: status.release %+v, want a deployed revision", a.name, st.Release)
	}
	hist, err := run("helm", "history", release, "-n", crashNamespace, "-o", "json")
	if err != nil {
		return err
	}
	var revs []struct {
		Revision int    `json:"revision"`
		Status   string `json:"status"`
	}
	if err := json.Unmarshal([]byte(hist), &revs); err != nil {
		return err
	}
	for _, r := range revs {
		if r.Status == "deployed" && r.Revision != st.Release.Revision {
			return fmt.Errorf("helm history of %s: revision %d is deployed, status says %d", release, r.Revision, st.Release.Revision)
		}
	}
	out, err := run("helm", "get", "values", release, "-n", crashNamespace, "-o", "json",
		"--revision", strconv.Itoa(st.Release.Revision))
	if err != nil {
		return err
	}
	var vals map[string]any
	if err := json.Unmarshal([]byte(out), &vals); err != nil {
		return err
	}
	want := map[string]any{"image": a.image, "replicas": float64(a.replicas), "port": float64(80)}
	if !reflect.DeepEqual(vals, want) {
		return fmt.Errorf("release %s revision %d serves values %v, want the spec %v", release, st.Release.Revision, vals, want)
	}
	image, err := run("kubectl", "get", "deployment", a.name, "-n", crashNamespace, "-o",
		"jsonpath={.spec.template.spec.containers[0].image} {.status.readyReplicas}")
	if err != nil {
		return err
	}
	if got := strings.TrimSpace(image); got != fmt.Sprintf("%s %d", a.image, a.replicas) {
		return fmt.Errorf("Deployment %s runs %q (image, ready), want %q", a.name, got, fmt.Sprintf("%s %d", a.image, a.replicas))
	}
	return nil
}

// pendingReleases lists the pending releases of namespace ns (other tests'
// run in parallel, each in its own namespace).
func pendingReleases(t *testing.T, ns string) []string {
	t.Helper()
	var list []helmListEntry
	if err := json.Unmarshal([]byte(helm(t, "list", "-n", ns, "--pending", "-o", "json")), &list); err != nil {
		t.Fatalf("decoding helm list --pending: %v", err)
	}
	var out []string
	for _, r := range list {
		out = append(out, fmt.Sprintf("%s/%s revision %s %s", r.Namespace, r.Name, r.Revision, r.Status))
	}
	return out
}

// checkBoundedHistory: restarts never pile up revisions beyond maxHistory.
func checkBoundedHistory(t *testing.T, name string) {
	t.Helper()
	var history []map[string]any
	out := helm(t, "history", releaseName(name), "-n", crashNamespace, "-o", "json")
	if err := json.Unmarshal([]byte(out), &history); err != nil {
		t.Fatalf("decoding helm history: %v", err)
	}
	if len(history) > 10 {
		t.Errorf("release %s keeps %d revisions, more than its maxHistory 10", releaseName(name), len(history))
	}
}

// cleanCrashNamespace deletes the test's WebApps, waits for rudder to
// uninstall them, then deletes the namespace.
func cleanCrashNamespace(t *testing.T) {
	t.Helper()
	if _, err := run("kubectl", "delete", "webapp", "--all", "-n", crashNamespace, "--wait=true", "--timeout=3m"); err != nil {
		t.Errorf("cleanup: %v", err)
	}
	if _, err := run("kubectl", "delete", "namespace", crashNamespace, "--wait=false"); err != nil {
		t.Errorf("cleanup: %v", err)
	}
}

// helmSteps are the steps whose Helm action logs its end ("Helm Install
// succeeded", "Helm rollback failed", …).
var helmSteps = []string{"install", "reinstall", "upgrade", "rollback"}

// plansHelmAction reports whether a manager log holds the plan of a step
// that runs a Helm action: the moment to kill it mid-operation.
func plansHelmAction(log string) bool {
	for _, st := range helmSteps {
		if strings.Contains(log, `"step": "`+st+`"`) {
			return true
		}
	}
	return false
}

// helmActionsInFlight counts the Helm actions a manager log shows planned
// and not ended: those its kill cut short.
func helmActionsInFlight(log string) int {
	n := 0
	for _, st := range helmSteps {
		n += strings.Count(log, `"step": "`+st+`"`)
	}
	for _, verb := range []string{"Install", "Upgrade", "rollback"} {
		n -= strings.Count(log, "Helm "+verb+" succeeded") + strings.Count(log, "Helm "+verb+" failed")
	}
	return n
}
