package startpages

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// Release pages out the binary's code and constant data, and returns the
// bytes of the process's file-backed pages resident before and after. On a
// kernel older than 5.4, which lacks MADV_PAGEOUT, it returns ErrUnsupported.
func Release() (before, after int64, err error) {
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		return 0, 0, err
	}
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return 0, 0, err
	}
	spans := readOnly(maps, exe)
	if len(spans) == 0 {
		return 0, 0, fmt.Errorf("no read-only mapping of %s in /proc/self/maps", exe)
	}
	before = resident()
	for _, s := range spans {
		// Addresses from maps, not Go pointers: no unsafe.Pointer is made.
		if _, _, errno := unix.Syscall(unix.SYS_MADVISE, s.start, s.end-s.start, unix.MADV_PAGEOUT); errno != 0 {
			if errno == unix.EINVAL {
				return before, before, ErrUnsupported
			}
			return before, resident(), fmt.Errorf("madvise(MADV_PAGEOUT) %#x-%#x: %w", s.start, s.end, errno)
		}
	}
	return before, resident(), nil
}

func resident() int64 {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	return residentFile(status)
}
