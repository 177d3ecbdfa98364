package guide

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/rudder-operator/rudder/internal/cli"
	"github.com/rudder-operator/rudder/internal/manager"
	"github.com/rudder-operator/rudder/test/testenv"
)

// guideFile is the guide, relative to the repository root.
const guideFile = "docs/adding-a-kind.md"

// TestGuide_AddingAKind follows docs/adding-a-kind.md step by step.
func TestGuide_AddingAKind(t *testing.T) {
	root, err := testenv.Root()
	if err != nil {
		t.Fatal(err)
	}
	text, err := os.ReadFile(filepath.Join(root, guideFile))
	if err != nil {
		t.Fatal(err)
	}
	blocks, err := parseBlocks(string(text))
	if err != nil {
		t.Fatalf("%s: %v", guideFile, err)
	}
	checkCoverage(t, blocks)

	work := t.TempDir()
	for _, p := range []string{"watches.yaml", "charts", "Makefile"} {
		if err := copyTree(filepath.Join(root, p), filepath.Join(work, p)); err != nil {
			t.Fatal(err)
		}
	}
	for _, b := range blocks {
		if err := materialize(root, work, b); err != nil {
			t.Fatalf("%s line %d: %v", guideFile, b.line, err)
		}
	}

	s := newSession(t, root, work)
	t.Chdir(work) // the guide's commands run at the root of the (copied) repository
	for _, b := range blocks {
		if _, ok := b.attrs["run"]; ok {
			s.run(b)
		}
	}
}

// checkCoverage fails t unless the guide still holds the steps this test is
// there to check, so that removing them does not leave a test checking nothing.
func checkCoverage(t *testing.T, blocks []block) {
	t.Helper()
	var commands, files []string
	for _, b := range blocks {
		if _, ok := b.attrs["run"]; ok {
			for _, c := range parseSession(b).commands {
				commands = append(commands, c.line)
			}
		}
		files = append(files, b.attrs["file"], b.attrs["append"])
	}
	for _, want := range []string{"make manifests", "make run", "kubectl apply -f config/crd/bases"} {
		if !slices.Contains(commands, want) {
			t.Errorf("%s runs no `%s` (in a ```console run block)", guideFile, want)
		}
	}
	for _, want := range []string{"watches.yaml", "charts/cache/Chart.yaml", "charts/cache/values.schema.json"} {
		if !slices.Contains(files, want) {
			t.Errorf("%s writes no %s (a block with file= or append=)", guideFile, want)
		}
	}
}

// materialize writes a file= or append= block into work, or checks that an
// excerpt= block is in the repository's file.
func materialize(root, work string, b block) error {
	if p := b.attrs["file"]; p != "" {
		return writeFile(filepath.Join(work, p), []byte(b.body), false)
	}
	if p := b.attrs["append"]; p != "" {
		if _, err := os.Stat(filepath.Join(work, p)); err != nil {
			return fmt.Errorf("append=%s: no such file in the copy (write it with file= first): %w", p, err)
		}
		return writeFile(filepath.Join(work, p), []byte(b.body), true)
	}
	if p := b.attrs["excerpt"]; p != "" {
		src, err := os.ReadFile(filepath.Join(root, p))
		if err != nil {
			return err
		}
		if !strings.Contains(string(src), b.body) {
			return fmt.Errorf("the block is not in %s as it is; copy it from there again", p)
		}
	}
	return nil
}

func writeFile(path string, data []byte, appendTo bool) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	flags := os.O_CREATE | os.O_WRONLY | os.O_TRUNC
	if appendTo {
		flags = os.O_CREATE | os.O_WRONLY | os.O_APPEND
	}
	f, err := os.OpenFile(path, flags, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

// copyTree copies the file or directory src to dst.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return writeFile(target, data, false)
	})
}

// session is the machine the guide's commands run on: envtest for the cluster,
// kubectl and helm from bin/, and, after `make run`, a rudder manager.
type session struct {
	t          *testing.T
	root, work string
	cfg        *rest.Config
	k8s        client.Client
	env        []string // of kubectl and helm: KUBECONFIG, PATH, Helm's directories
	log        *syncBuffer
}

func newSession(t *testing.T, root, work string) *session {
	t.Helper()
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	if assets == "" {
		assets = filepath.Join(root, "bin")
	}
	env := &envtest.Environment{BinaryAssetsDirectory: assets} // no CRDs: the guide installs them
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("starting envtest (KUBEBUILDER_ASSETS=%s; run `make tools`): %v", assets, err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	user, err := env.AddUser(envtest.User{Name: "guide", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig, err := user.KubeConfig()
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	if err := writeFile(filepath.Join(home, "kubeconfig"), kubeconfig, false); err != nil {
		t.Fatal(err)
	}
	sch := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(sch); err != nil {
		t.Fatal(err)
	}
	if err := apiextensionsv1.AddToScheme(sch); err != nil {
		t.Fatal(err)
	}
	k8s, err := client.New(cfg, client.Options{Scheme: sch})
	if err != nil {
		t.Fatal(err)
	}
	return &session{
		t: t, root: root, work: work, cfg: cfg, k8s: k8s, log: &syncBuffer{},
		env: append(os.Environ(),
			"KUBECONFIG="+filepath.Join(home, "kubeconfig"),
			"PATH="+assets+string(os.PathListSeparator)+filepath.Join(root, "bin")+string(os.PathListSeparator)+os.Getenv("PATH"),
			"HOME="+home, "HELM_CACHE_HOME="+filepath.Join(home, "cache"),
			"HELM_CONFIG_HOME="+filepath.Join(home, "config"), "HELM_DATA_HOME="+filepath.Join(home, "data"),
		),
	}
}

// run runs the commands of a `console run` block, each until its output is
// what the block shows (read-only commands are retried for a minute, while
// rudder works; others run once).
func (s *session) run(b block) {
	s.t.Helper()
	for _, c := range parseSession(b).commands {
		deadline := time.Now().Add(time.Minute)
		for {
			got, retry := s.do(c.line)
			if matchLines(c.output, outputLines(got)) {
				break
			}
			if !retry || time.Now().After(deadline) {
				s.t.Fatalf("%s line %d: $ %s\nprinted:\n%s\nthe guide says:\n%s", guideFile, c.lineNo, c.line,
					got, strings.Join(c.output, "\n"))
			}
			time.Sleep(500 * time.Millisecond)
		}
	}
}

// do runs one command line and returns what it printed, and whether it
// may run again until it prints what the guide says.
func (s *session) do(line string) (string, bool) {
	s.t.Helper()
	switch {
	case line == "make manifests":
		return s.makeManifests(), false
	case line == "make run":
		s.makeRun()
		return s.log.String(), true
	case strings.HasPrefix(line, "kubectl ") || strings.HasPrefix(line, "helm "):
		cmd := exec.Command("bash", "-c", line)
		cmd.Dir, cmd.Env = s.work, s.env
		out, _ := cmd.CombinedOutput() // a refusal is output the guide shows, not a failure
		fields := strings.Fields(line)
		readOnly := len(fields) > 1 && slices.Contains([]string{"get", "describe", "explain", "list", "history", "status"}, fields[1])
		return string(out), readOnly
	default:
		s.t.Fatalf("%s: the guide runs `%s`, which this test cannot run; run it by hand in a block without `run`", guideFile, line)
		return "", false
	}
}

// makeManifests runs the Makefile's manifests recipe, `go run ./cmd/rudder
// manifests ...`, through the function ./cmd/rudder calls, and returns what
// make would print: the recipe, then the command's output.
func (s *session) makeManifests() string {
	s.t.Helper()
	recipe, err := makeRecipe(filepath.Join(s.work, "Makefile"), "manifests")
	if err != nil {
		s.t.Fatal(err)
	}
	const prefix = "go run ./cmd/rudder "
	if !strings.HasPrefix(recipe, prefix) {
		s.t.Fatalf("the Makefile's manifests recipe is %q; this test runs only %q...", recipe, prefix)
	}
	var out bytes.Buffer
	if err := cli.Run(context.Background(), strings.Fields(strings.TrimPrefix(recipe, prefix)), cli.Options{IO: genericiooptions.IOStreams{Out: &out, ErrOut: &out}}); err != nil {
		s.t.Fatalf("make manifests: %v\n%s", err, out.String())
	}
	return recipe + "\n" + out.String()
}

// makeRecipe returns the one command line of target in makefile.
func makeRecipe(makefile, target string) (string, error) {
	data, err := os.ReadFile(makefile)
	if err != nil {
		return "", err
	}
	lines := strings.Split(string(data), "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, target+":") && i+1 < len(lines) && strings.HasPrefix(lines[i+1], "\t") {
			return strings.TrimSpace(lines[i+1]), nil
		}
	}
	return "", fmt.Errorf("%s: no target %s with a recipe", makefile, target)
}

// makeRun does what `make run` does once the cluster is there: it waits until
// every CRD is established and starts a rudder manager on the copy's
// watches.yaml (the charts `make build` embeds), logging JSON into s.log.
func (s *session) makeRun() {
	s.t.Helper()
	if s.log.started {
		return
	}
	s.log.started = true
	testenv.Eventually(s.t, "every CRD established", func() error {
		var crds apiextensionsv1.CustomResourceDefinitionList
		if err := s.k8s.List(context.Background(), &crds); err != nil {
			return err
		}
		if len(crds.Items) == 0 {
			return fmt.Errorf("no CRDs installed")
		}
		for _, crd := range crds.Items {
			if !established(&crd) {
				return fmt.Errorf("CRD %s is not established", crd.Name)
			}
		}
		return nil
	})
	log := zap.New(zap.WriteTo(s.log)) // JSON, as the manager logs by default
	ctrl.SetLogger(log)
	mgr, err := manager.New(manager.Options{
		Config: s.cfg, WatchesFile: filepath.Join(s.work, "watches.yaml"), MetricsAddr: "0", ProbeAddr: "0",
	}, log)
	if err != nil {
		s.t.Fatalf("make run: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	go playDeploymentController(ctx, s.k8s)
	s.t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			s.t.Errorf("manager: %v", err)
		}
	})
}

func established(crd *apiextensionsv1.CustomResourceDefinition) bool {
	for _, c := range crd.Status.Conditions {
		if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
			return true
		}
	}
	return false
}

// syncBuffer is the manager's log: written by its goroutines, read by the test.
type syncBuffer struct {
	mu      sync.Mutex
	b       bytes.Buffer
	started bool // the manager runs
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
