package testenv

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// Root returns the repository root: the nearest directory above the working
// directory that holds go.mod and watches.yaml.
func Root() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if fileExists(filepath.Join(dir, "go.mod")) && fileExists(filepath.Join(dir, "watches.yaml")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("testenv: repository root not found above the working directory")
		}
		dir = parent
	}
}

// Start starts envtest with the CRDs of config/crd/bases and of extraCRDDirs
// (relative to the repository root). Stop it with env.Stop.
func Start(extraCRDDirs ...string) (*envtest.Environment, *rest.Config, error) {
	return StartWithGates("", extraCRDDirs...)
}

// StartWithGates is Start with kube-apiserver's --feature-gates set to gates
// (such as "ShardedListAndWatch=true"); "" leaves them at their defaults.
func StartWithGates(gates string, extraCRDDirs ...string) (*envtest.Environment, *rest.Config, error) {
	root, err := Root()
	if err != nil {
		return nil, nil, err
	}
	assets := assetsDir(root)
	for _, b := range []string{"etcd", "kube-apiserver"} {
		if !fileExists(filepath.Join(assets, b)) {
			return nil, nil, fmt.Errorf("testenv: %s not found in %s: run `make tools` first", b, assets)
		}
	}
	dirs := []string{filepath.Join(root, "config", "crd", "bases")}
	for _, d := range extraCRDDirs {
		dirs = append(dirs, filepath.Join(root, d))
	}
	env := &envtest.Environment{
		BinaryAssetsDirectory: assets,
		CRDDirectoryPaths:     dirs,
		ErrorIfCRDPathMissing: true,
	}
	if gates != "" {
		env.ControlPlane.GetAPIServer().Configure().Append("feature-gates", gates)
	}
	cfg, err := env.Start()
	if err != nil {
		return nil, nil, fmt.Errorf("testenv: starting envtest: %w", err)
	}
	return env, cfg, nil
}

// FuzzOnly says whether this test binary runs fuzz inputs and no test: as a worker of `go test -fuzz`, or as
// its coordinator with -run '^$' (as `make fuzz` runs it). A TestMain then skips starting the servers only the
// tests need. It parses the command line's flags.
func FuzzOnly() bool {
	if !flag.Parsed() {
		flag.Parse()
	}
	value := func(name string) string {
		if f := flag.Lookup(name); f != nil {
			return f.Value.String()
		}
		return ""
	}
	return value("test.fuzzworker") == "true" || (value("test.fuzz") != "" && value("test.run") == "^$")
}

// assetsDir is where `make tools` puts the control-plane binaries and helm:
// KUBEBUILDER_ASSETS, else the repository's bin/.
func assetsDir(root string) string {
	if dir := os.Getenv("KUBEBUILDER_ASSETS"); dir != "" {
		return dir
	}
	return filepath.Join(root, "bin")
}

// Tool returns the path of a binary `make tools` builds, such as helm.
func Tool(name string) (string, error) {
	root, err := Root()
	if err != nil {
		return "", err
	}
	p := filepath.Join(assetsDir(root), name)
	if !fileExists(p) {
		return "", fmt.Errorf("testenv: %s not found at %s: run `make tools` first", name, p)
	}
	return p, nil
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// StartFor starts an API server for one test, as Start does, stopped when the
// test ends, and returns its REST config; a failure to start fails t.
func StartFor(t testing.TB, extraCRDDirs ...string) *rest.Config {
	t.Helper()
	env, cfg, err := Start(extraCRDDirs...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	return cfg
}
