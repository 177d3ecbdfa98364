package memlimit

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/go-logr/logr"
)

// ratio is the share of the container's memory limit Go may use: the rest
// is for the binary's own pages (about 45 MiB of rudder's) and the memory
// Go does not count.
const ratio = 0.9

// Files of the memory limit under a cgroup root: cgroup v2's, then v1's.
var files = []string{"memory.max", "memory/memory.limit_in_bytes"}

// unlimited is where cgroup v1 reports no limit (a page-rounded MaxInt64).
const unlimited = int64(1) << 62

// limit reads the memory limit of the cgroup mounted at root (in a
// container, /sys/fs/cgroup is its own). ok is false when there is none.
func limit(root string) (limit int64, ok bool, err error) {
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(root, f))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return 0, false, err
		}
		s := strings.TrimSpace(string(b))
		if s == "max" {
			return 0, false, nil
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, false, fmt.Errorf("%s: %q is not a number of bytes", filepath.Join(root, f), s)
		}
		return n, n > 0 && n < unlimited, nil
	}
	return 0, false, nil
}

// Set gives Go a soft memory limit of ratio times the container's limit,
// read under root, unless $GOMEMLIMIT sets one already (Go applied it at
// start), and logs the limit in force. It returns the limit it set, 0 when
// none.
func Set(root string, log logr.Logger) int64 {
	if v := os.Getenv("GOMEMLIMIT"); v != "" {
		log.Info("Go's soft memory limit is $GOMEMLIMIT's", "GOMEMLIMIT", v)
		return 0
	}
	hard, ok, err := limit(root)
	if err != nil {
		log.Error(err, "Cannot read the container's memory limit; Go's memory limit is left unset")
		return 0
	}
	if !ok {
		return 0
	}
	soft := int64(float64(hard) * ratio)
	debug.SetMemoryLimit(soft)
	log.Info("Go's soft memory limit is a share of the container's memory limit; $GOMEMLIMIT sets another",
		"containerLimitBytes", hard, "goLimitBytes", soft, "share", ratio)
	return soft
}
