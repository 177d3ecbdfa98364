package memlimit

import (
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/go-logr/logr"
)

// cgroup writes a cgroup root holding file with content.
func cgroup(t *testing.T, file, content string) string {
	t.Helper()
	root := t.TempDir()
	path := filepath.Join(root, file)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}

func TestLimit(t *testing.T) {
	for _, tc := range []struct {
		name, file, content string
		limit               int64
		ok                  bool
		err                 string
	}{
		{"cgroup v2 with a limit", "memory.max", "536870912\n", 512 << 20, true, ""},
		{"cgroup v2 without one", "memory.max", "max\n", 0, false, ""},
		{"cgroup v1 with a limit", "memory/memory.limit_in_bytes", "134217728\n", 128 << 20, true, ""},
		{"cgroup v1 without one", "memory/memory.limit_in_bytes", "9223372036854771712\n", 9223372036854771712, false, ""},
		{"no memory controller", "cpu.max", "max 100000\n", 0, false, ""},
		{"not a number", "memory.max", "lots\n", 0, false, `"lots" is not a number of bytes`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok, err := limit(cgroup(t, tc.file, tc.content))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want one saying %s", err, tc.err)
				}
				return
			}
			if err != nil || got != tc.limit || ok != tc.ok {
				t.Errorf("limit = %d, %t, %v; want %d, %t", got, ok, err, tc.limit, tc.ok)
			}
		})
	}
}

// Set gives Go 90% of a container's limit, and leaves a $GOMEMLIMIT alone.
func TestSet(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1)) // restore the limit in force
	root := cgroup(t, "memory.max", "1073741824\n")

	t.Setenv("GOMEMLIMIT", "")
	gib := int64(1 << 30)
	if got, want := Set(root, logr.Discard()), int64(float64(gib)*ratio); got != want || debug.SetMemoryLimit(-1) != want {
		t.Errorf("Set = %d, Go's limit %d; want %d for a 1 GiB container", got, debug.SetMemoryLimit(-1), want)
	}

	debug.SetMemoryLimit(math.MaxInt64)
	t.Setenv("GOMEMLIMIT", "300MiB")
	if got := Set(root, logr.Discard()); got != 0 || debug.SetMemoryLimit(-1) != math.MaxInt64 {
		t.Errorf("with $GOMEMLIMIT set, Set = %d and Go's limit %d; want both untouched", got, debug.SetMemoryLimit(-1))
	}

	t.Setenv("GOMEMLIMIT", "")
	if got := Set(cgroup(t, "memory.max", "max\n"), logr.Discard()); got != 0 || debug.SetMemoryLimit(-1) != math.MaxInt64 {
		t.Errorf("without a container limit, Set = %d and Go's limit %d; want both untouched", got, debug.SetMemoryLimit(-1))
	}
}
