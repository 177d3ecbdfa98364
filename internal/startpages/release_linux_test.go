package startpages

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// The test binary, like rudder's, has run the init of every package it links:
// paged out, its resident file pages shrink, and the test goes on running on
// the pages it faults back in.
func TestRelease_ShrinksTheResidentPagesOfTheBinary(t *testing.T) {
	before, after, err := Release()
	if errors.Is(err, ErrUnsupported) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if before <= 0 || after >= before {
		t.Errorf("resident file pages: %d bytes before, %d after; want fewer after", before, after)
	}
	t.Logf("resident file pages: %d KiB before, %d KiB after", before>>10, after>>10)
}

// Run as a user that neither owns nor may write the binary, Release says so
// and names the fix, where the kernel alone would skip the pages silently.
// It needs root, to run a copy of the test binary as another user.
func TestRelease_NamesTheOwnerWhenTheKernelWouldSkipThePages(t *testing.T) {
	if os.Getenv(asNobody) != "" {
		_, _, err := Release()
		if err == nil || !strings.Contains(err.Error(), "belongs to uid 0") || !strings.Contains(err.Error(), "give the binary to the user it runs as") {
			t.Fatalf("Release as a user that does not own the binary: %v", err)
		}
		return
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root, to run the test binary as another user")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, d := range []string{filepath.Dir(dir), dir} { // both are the test's own, 0700
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	copied := filepath.Join(dir, "startpages.test")
	b, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(copied, b, 0o555); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(copied, "-test.run=^TestRelease_NamesTheOwnerWhenTheKernelWouldSkipThePages$", "-test.v")
	cmd.Env = append(os.Environ(), asNobody+"=1")
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("as uid 65534: %v\n%s", err, out)
	}
}

const asNobody = "STARTPAGES_TEST_AS_NOBODY"
