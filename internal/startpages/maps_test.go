package startpages

import (
	"reflect"
	"testing"
)

func TestReadOnly_TakesTheBinarysCodeAndConstantsOnly(t *testing.T) {
	maps := []byte(`00400000-01fdf000 r-xp 00000000 fd:01 4211 /usr/local/bin/manager
01fdf000-03eb5000 r--p 01bdf000 fd:01 4211 /usr/local/bin/manager
03eb5000-03fb6000 rw-p 03ab5000 fd:01 4211 /usr/local/bin/manager
03fb6000-0600f000 rw-p 00000000 00:00 0
c000000000-c004000000 rw-p 00000000 00:00 0
7f0000000000-7f0000001000 r--p 00000000 fd:01 99 /usr/local/bin/manager-other
7f0000002000-7f0000003000 r-xp 00000000 fd:01 98 /opt/my tools/manager
7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0                          [stack]
7ffd0003e000-7ffd00040000 r-xp 00000000 00:00 0                          [vdso]
zzzz-0001 r-xp 00000000 fd:01 4211 /usr/local/bin/manager
`)
	want := []span{{0x400000, 0x1fdf000}, {0x1fdf000, 0x3eb5000}}
	if got := readOnly(maps, "/usr/local/bin/manager"); !reflect.DeepEqual(got, want) {
		t.Errorf("readOnly = %#v, want %#v", got, want)
	}
	if got := readOnly(maps, "/opt/my tools/manager"); !reflect.DeepEqual(got, []span{{0x7f0000002000, 0x7f0000003000}}) {
		t.Errorf("a path with a space: %#v", got)
	}
}

func TestResidentFile(t *testing.T) {
	status := []byte("Name:\tmanager\nVmRSS:\t   92812 kB\nRssAnon:\t   42716 kB\nRssFile:\t   50096 kB\nRssShmem:\t       0 kB\n")
	if got := residentFile(status); got != 50096<<10 {
		t.Errorf("residentFile = %d, want %d", got, 50096<<10)
	}
	if got := residentFile([]byte("Name:\tkthreadd\n")); got != 0 {
		t.Errorf("no RssFile line: %d, want 0", got)
	}
}
