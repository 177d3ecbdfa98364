package backup

import (
	"strings"
	"time"
)

// TimeFormat is the layout of the timestamp in a dump's name: UTC, to the
// second, so that names of one prefix sort by time. It matches the scripts'
// `date -u +%Y%m%dT%H%M%SZ`.
const TimeFormat = "20060102T150405Z"

// DumpExt ends every finished dump's name. A dump being written is named
// "." + name + ".partial" until pg_dump succeeded and the archive was read back.
const DumpExt = ".dump"

// DumpName is the name of the dump of prefix taken at t, as the backup script
// writes it: "<prefix>-<YYYYmmddTHHMMSSZ>.dump".
func DumpName(prefix string, t time.Time) string {
	return prefix + "-" + t.UTC().Format(TimeFormat) + DumpExt
}

// ParseDumpTime reports whether file (a base name in the backup directory) is
// a finished dump of prefix, exactly as the scripts recognize one, and when it
// was taken. Files of other prefixes, partial dumps and anything else give
// false; for prefixes the scripts accept, no file belongs to two prefixes.
func ParseDumpTime(prefix, file string) (time.Time, bool) {
	stamp, ok := strings.CutPrefix(file, prefix+"-")
	if !ok {
		return time.Time{}, false
	}
	stamp, ok = strings.CutSuffix(stamp, DumpExt)
	if !ok || !stampShape(stamp) {
		return time.Time{}, false
	}
	t, err := time.Parse(TimeFormat, stamp)
	if err != nil {
		return time.Time{}, false
	}
	return t, true
}

// stampShape reports whether s has the shape the scripts' glob matches:
// eight digits, "T", six digits, "Z".
func stampShape(s string) bool {
	if len(s) != len(TimeFormat) {
		return false
	}
	for i := range len(s) {
		switch {
		case i == 8:
			if s[i] != 'T' {
				return false
			}
		case i == len(s)-1:
			if s[i] != 'Z' {
				return false
			}
		case s[i] < '0' || s[i] > '9':
			return false
		}
	}
	return true
}

// stampGlob is stampShape as a shell pattern.
const stampGlob = "[0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9]T[0-9][0-9][0-9][0-9][0-9][0-9]Z"
