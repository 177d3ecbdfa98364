package startpages

import (
	"bufio"
	"bytes"
	"errors"
	"strconv"
	"strings"
)

// ErrUnsupported says the system cannot page out a range on request.
var ErrUnsupported = errors.New("this system does not page out on request (MADV_PAGEOUT, Linux 5.4 and later)")

// span is a range of addresses, [start, end).
type span struct{ start, end uintptr }

// readOnly returns the mappings of file exe that /proc/<pid>/maps content
// maps lists without write permission: the binary's code and constant data.
// Its writable data is left out: its pages may hold what the process wrote.
func readOnly(maps []byte, exe string) []span {
	var spans []span
	sc := bufio.NewScanner(bytes.NewReader(maps))
	for sc.Scan() {
		// address perms offset dev inode path (the path may hold spaces)
		f := strings.Fields(sc.Text())
		if len(f) < 6 || strings.Join(f[5:], " ") != exe || strings.Contains(f[1], "w") {
			continue
		}
		from, to, ok := strings.Cut(f[0], "-")
		start, err1 := strconv.ParseUint(from, 16, 64)
		end, err2 := strconv.ParseUint(to, 16, 64)
		if !ok || err1 != nil || err2 != nil || end <= start {
			continue
		}
		spans = append(spans, span{uintptr(start), uintptr(end)})
	}
	return spans
}

// residentFile is the size of the file-backed pages /proc/<pid>/status
// content status reports resident (RssFile), in bytes; 0 when it has none.
func residentFile(status []byte) int64 {
	for line := range strings.Lines(string(status)) {
		if v, ok := strings.CutPrefix(line, "RssFile:"); ok {
			kib, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kib << 10
		}
	}
	return 0
}
