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
	if err := mayPageOut(exe); err != nil {
		return 0, 0, err
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

// mayPageOut returns an error naming the fix when the kernel would leave the
// pages of file exe resident: it pages out a file's pages only for a process
// that owns the file or may write it (else the page cache would be a side
// channel between processes), and skips the others without an error.
func mayPageOut(exe string) error {
	if unix.Access(exe, unix.W_OK) == nil {
		return nil
	}
	var st unix.Stat_t
	if err := unix.Stat(exe, &st); err != nil {
		return err
	}
	if euid := uint32(os.Geteuid()); st.Uid != euid {
		return fmt.Errorf("%s belongs to uid %d and this process runs as uid %d: the kernel pages out a file's pages only "+
			"for its owner; give the binary to the user it runs as (the image's Dockerfile does)", exe, st.Uid, euid)
	}
	return nil
}

func resident() int64 {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	return residentFile(status)
}
