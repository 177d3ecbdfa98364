package backup

import (
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// scriptEnv is the environment the backup hook gives a script run as c
// against dumps of prefix in dir.
func (s *server) scriptEnv(c creds, dir, prefix string) map[string]string {
	env := s.env(c)
	env["BACKUP_DIR"] = dir
	env["BACKUP_PREFIX"] = prefix
	env["BACKUP_RETENTION"] = "2"
	env["RESTORE_FILE"] = "latest"
	return env
}

var wrote = regexp.MustCompile(`(?m)^backup: wrote (\S+) \(\d+ bytes\)$`)

// backup runs Script as c, requires it to succeed, and returns the name
// of the dump it wrote.
func (s *server) backup(t *testing.T, c creds, dir, prefix, retention string) string {
	t.Helper()
	env := s.scriptEnv(c, dir, prefix)
	env["BACKUP_RETENTION"] = retention
	report := filepath.Join(t.TempDir(), "report")
	env[EnvReportFile] = report
	out, err := runScript(t, Script(), env)
	if err != nil {
		t.Fatalf("backup: %v\n%s", err, out)
	}
	m := wrote.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("backup output names no dump:\n%s", out)
	}
	// The report, status.backups' source, lists exactly the dumps kept.
	reported, err := os.ReadFile(report)
	if err != nil {
		t.Fatalf("the backup wrote no report: %v\n%s", err, out)
	}
	if got, want := strings.Fields(string(reported)), dumpsOf(t, dir, prefix); !slices.Equal(got, want) {
		t.Errorf("backup reported %q, want the dumps kept %q", got, want)
	}
	return m[1]
}

// items makes the table items as c's own, holding names.
func (s *server) items(t *testing.T, c creds, names ...string) {
	t.Helper()
	s.psql(t, c, "CREATE TABLE items (name text PRIMARY KEY)")
	for _, n := range names {
		s.psql(t, c, "INSERT INTO items VALUES ('"+n+"')")
	}
}

// rows returns the names in c's items, sorted and comma-separated, or
// "no table".
func (s *server) rows(t *testing.T, c creds) string {
	t.Helper()
	if s.psql(t, c, "SELECT to_regclass('public.items') IS NULL") == "t" {
		return "no table"
	}
	return s.psql(t, c, "SELECT coalesce(string_agg(name, ',' ORDER BY name), '') FROM items")
}

// snapshot maps every file in dir to its content.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files[e.Name()] = string(b)
	}
	return files
}

func write(t *testing.T, dir, name, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// dumpsOf lists the files in dir ParseDumpTime takes for dumps of prefix.
func dumpsOf(t *testing.T, dir, prefix string) []string {
	t.Helper()
	var names []string
	for name := range snapshot(t, dir) {
		if _, ok := ParseDumpTime(prefix, name); ok {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

func TestScripts_Syntax(t *testing.T) {
	for name, script := range map[string]string{"backup": Script(), "restore": RestoreScript()} {
		t.Run(name, func(t *testing.T) {
			if out, err := exec.Command("/bin/sh", "-n", "-c", script).CombinedOutput(); err != nil {
				t.Errorf("/bin/sh -n: %v\n%s", err, out)
			}
			if !strings.HasPrefix(script, "#!/bin/sh\n") || !strings.Contains(script, "\nset -eu\n") {
				t.Errorf("script does not start with #!/bin/sh and set -eu:\n%s", script)
			}
			if strings.Contains(script, "{{") || strings.Contains(script, "<no value>") {
				t.Errorf("script has template leftovers:\n%s", script)
			}
			shellcheck, err := exec.LookPath("shellcheck")
			if err != nil {
				t.Fatal("shellcheck not found: install it (apt-get install shellcheck; .ci/run does)")
			}
			cmd := exec.Command(shellcheck, "--shell=sh", "-")
			cmd.Stdin = strings.NewReader(script)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("shellcheck: %v\n%s", err, out)
			}
		})
	}
}

// TestBackupScript_Retention runs a backup three times with a retention of two:
// each run writes a dump with a later timestamp, the oldest goes, and nothing
// else in the shared directory is touched.
func TestBackupScript_Retention(t *testing.T) {
	s := pg(t)
	shop := s.newDatabase(t, "shop")
	s.items(t, shop, "apple")
	dir := t.TempDir()
	// A careless "shop-*.dump" would take the first four for shop's; the
	// first sorts before shop's own dumps, so it would be pruned first.
	decoys := map[string]string{
		"shop-1-20200101T000000Z.dump":           "Database shop-1's dump",
		"shop-eu-20200101T000000Z.dump":          "another Database's dump",
		"shop-old.dump":                          "a file a user put there",
		"shop-20200101T000000Z.dump.bak":         "a user's copy",
		"other-20200101T000000Z.dump":            "another Database's dump",
		".shop-eu-20200101T000000Z.dump.partial": "another Database's interrupted dump",
		"notes.txt":                              "unrelated",
	}
	for name, content := range decoys {
		write(t, dir, name, content)
		if err := os.Chtimes(filepath.Join(dir, name), time.Now().Add(-48*time.Hour), time.Now().Add(-48*time.Hour)); err != nil {
			t.Fatal(err)
		}
		if _, ok := ParseDumpTime("shop", name); ok {
			t.Fatalf("ParseDumpTime takes decoy %s for a dump of shop", name)
		}
	}

	var written []string
	for i, next := range []string{"banana", "cherry", ""} {
		before := time.Now().UTC().Truncate(time.Second)
		name := s.backup(t, shop, dir, "shop", "2")
		taken, ok := ParseDumpTime("shop", name)
		if !ok {
			t.Fatalf("run %d wrote %q, which ParseDumpTime does not take for a dump of shop", i+1, name)
		}
		if taken.Before(before) || taken.After(time.Now()) {
			t.Errorf("run %d: dump time %s is not between %s and now", i+1, taken, before)
		}
		if len(written) > 0 {
			prev, _ := ParseDumpTime("shop", written[len(written)-1])
			if !taken.After(prev) {
				t.Errorf("run %d wrote %s, not later than %s", i+1, name, written[len(written)-1])
			}
		}
		written = append(written, name)
		want := written[max(0, len(written)-2):]
		if got := dumpsOf(t, dir, "shop"); !slices.Equal(got, want) {
			t.Errorf("after run %d the dumps of shop are %v, want %v", i+1, got, want)
		}
		if next != "" {
			s.psql(t, shop, "INSERT INTO items VALUES ('"+next+"')")
		}
	}

	files := snapshot(t, dir)
	for name, content := range decoys {
		if files[name] != content {
			t.Errorf("%s was changed or removed", name)
		}
	}
	if len(files) != len(decoys)+2 {
		t.Errorf("directory holds %v, want the decoys and %v only", slices.Sorted(maps.Keys(files)), written[1:])
	}
	if _, ok := files[written[0]]; ok {
		t.Errorf("the oldest dump %s was kept", written[0])
	}
}

// TestBackupScript_SameSecond: a backup never reuses a name that is taken,
// finished or still being written, and removes only stale partial dumps of its
// own prefix.
func TestBackupScript_SameSecond(t *testing.T) {
	s := pg(t)
	shop := s.newDatabase(t, "shop")
	s.items(t, shop, "apple")
	dir := t.TempDir()
	now := time.Now()
	old := now.Add(-2 * time.Hour)
	taken := map[string]time.Time{ // name -> modification time
		DumpName("shop", now):                                       now,
		DumpName("shop", now.Add(time.Second)):                      now,
		"." + DumpName("shop", now.Add(2*time.Second)) + ".partial": now, // a run in progress
		"." + DumpName("shop-eu", old) + ".partial":                 old, // another prefix's
	}
	stale := "." + DumpName("shop", old) + ".partial"
	taken[stale] = old
	for name, mtime := range taken {
		write(t, dir, name, "sentinel")
		if err := os.Chtimes(filepath.Join(dir, name), mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}

	name := s.backup(t, shop, dir, "shop", "10")

	if _, ok := taken[name]; ok {
		t.Fatalf("backup wrote %s, a name already taken", name)
	}
	files := snapshot(t, dir)
	for n := range taken {
		_, kept := files[n]
		switch {
		case n == stale && kept:
			t.Errorf("stale partial dump %s was kept", n)
		case n != stale && (!kept || files[n] != "sentinel"):
			t.Errorf("%s was changed or removed", n)
		}
	}
	if got, want := len(dumpsOf(t, dir, "shop")), 3; got != want {
		t.Errorf("%d dumps of shop, want %d (the two there and %s)", got, want, name)
	}
}

// TestRestoreScript restores dumps the backup script wrote: into the database
// they came from and into a new Database's, with its own user.
func TestRestoreScript(t *testing.T) {
	s := pg(t)
	shop := s.newDatabase(t, "shop")
	s.items(t, shop, "apple")
	dir := t.TempDir()
	first := s.backup(t, shop, dir, "shop", "5")
	s.psql(t, shop, "INSERT INTO items VALUES ('banana')")
	s.backup(t, shop, dir, "shop", "5")

	tests := []struct {
		name    string
		into    func(t *testing.T) creds // the database restored into, after any damage
		file    string
		want    string
		wantOut string
		// wantReport is the dump the script reports restoring; "" for the newest.
		wantReport string
	}{
		{
			name: "latest, after the table was dropped",
			into: func(t *testing.T) creds {
				s.psql(t, shop, "DROP TABLE items")
				return shop
			},
			file: "latest",
			want: "apple,banana",
		},
		{
			name: "a named older dump, over changed data",
			into: func(t *testing.T) creds {
				s.psql(t, shop, "DELETE FROM items; INSERT INTO items VALUES ('zucchini')")
				return shop
			},
			file:       first,
			want:       "apple",
			wantOut:    "restored " + first + " into database shop",
			wantReport: first,
		},
		{
			name: "latest, into a new Database with its own user",
			into: func(t *testing.T) creds {
				return s.newDatabase(t, "shop_copy")
			},
			file: "latest",
			want: "apple,banana",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			into := tt.into(t)
			env := s.scriptEnv(into, dir, "shop")
			env["RESTORE_FILE"] = tt.file
			report := filepath.Join(t.TempDir(), "report")
			env[EnvReportFile] = report
			out, err := runScript(t, RestoreScript(), env)
			if err != nil {
				t.Fatalf("restore: %v\n%s", err, out)
			}
			reported, err := os.ReadFile(report)
			if err != nil {
				t.Fatalf("the restore wrote no report: %v\n%s", err, out)
			}
			if want := tt.wantReport; want != "" && string(reported) != want || !strings.HasSuffix(string(reported), DumpExt) {
				t.Errorf("report = %q, want the restored dump's name (%q)", reported, want)
			}
			if got := s.rows(t, into); got != tt.want {
				t.Errorf("rows after restore = %q, want %q\n%s", got, tt.want, out)
			}
			if owner := s.psql(t, into, "SELECT tableowner FROM pg_tables WHERE tablename = 'items'"); owner != into.user {
				t.Errorf("items is owned by %q, want %q", owner, into.user)
			}
			if !strings.Contains(out, tt.wantOut) {
				t.Errorf("output lacks %q:\n%s", tt.wantOut, out)
			}
		})
	}
}

// TestBackupScript_Failures: a backup that cannot finish exits non-zero,
// keeps no new dump and removes none.
func TestBackupScript_Failures(t *testing.T) {
	s := pg(t)
	shop := s.newDatabase(t, "shop")
	s.items(t, shop, "apple")
	closed, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	// A pg_dump that exits 0 but writes no archive, first on PATH.
	fake := t.TempDir()
	write(t, fake, "pg_dump", "#!/bin/sh\nfor a; do case $a in --file=*) echo garbage >\"${a#--file=}\" ;; esac; done\n")
	if err := os.Chmod(filepath.Join(fake, "pg_dump"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		env     map[string]string // over a working environment with a retention of 1
		wantOut string
	}{
		{name: "wrong password", env: map[string]string{"PGPASSWORD": randomSecret("wrong")}, wantOut: "password authentication failed for user \"shop\"\nbackup: error: pg_dump of database shop failed"},
		{name: "no such database", env: map[string]string{"PGDATABASE": "nosuchdb"}, wantOut: "database \"nosuchdb\" does not exist\nbackup: error: pg_dump of database nosuchdb failed"},
		{name: "pg_dump succeeds with a broken archive", env: map[string]string{"PATH": fake + ":" + s.env(shop)["PATH"]}, wantOut: "the archive pg_dump wrote cannot be read back"},
		{name: "server not answering", env: map[string]string{"PGPORT": closed, "DB_WAIT_SECONDS": "3"}, wantOut: "did not accept connections within 3s"},
		{name: "password not set", env: map[string]string{"PGPASSWORD": ""}, wantOut: "PGPASSWORD is not set"},
		{name: "retention zero", env: map[string]string{"BACKUP_RETENTION": "0"}, wantOut: "BACKUP_RETENTION must be a whole number of at least 1, got '0'"},
		{name: "retention not a number", env: map[string]string{"BACKUP_RETENTION": "two"}, wantOut: "got 'two'"},
		{name: "prefix with a slash", env: map[string]string{"BACKUP_PREFIX": "../shop"}, wantOut: "BACKUP_PREFIX '../shop' must be"},
		{name: "prefix with a capital", env: map[string]string{"BACKUP_PREFIX": "Shop"}, wantOut: "BACKUP_PREFIX 'Shop' must be"},
		{name: "no backup directory", env: map[string]string{"BACKUP_DIR": "/nonexistent/backups"}, wantOut: "BACKUP_DIR /nonexistent/backups is not a directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			// Two dumps with a retention of 1: any run that went on would prune.
			for _, d := range []time.Time{time.Now().Add(-2 * time.Hour), time.Now().Add(-time.Hour)} {
				write(t, dir, DumpName("shop", d), "an earlier dump")
			}
			// And a stale partial dump any run that went on would remove.
			old := time.Now().Add(-3 * time.Hour)
			stale := "." + DumpName("shop", old) + ".partial"
			write(t, dir, stale, "stale")
			if err := os.Chtimes(filepath.Join(dir, stale), old, old); err != nil {
				t.Fatal(err)
			}
			before := snapshot(t, dir)
			env := s.scriptEnv(shop, dir, "shop")
			env["BACKUP_RETENTION"] = "1"
			maps.Copy(env, tt.env)

			out, err := runScript(t, Script(), env)

			if err == nil {
				t.Fatalf("backup succeeded, want a failure:\n%s", out)
			}
			if !strings.Contains(out, tt.wantOut) {
				t.Errorf("output lacks %q:\n%s", tt.wantOut, out)
			}
			if after := snapshot(t, dir); !maps.Equal(after, before) {
				t.Errorf("the directory changed: before %v, after %v\n%s", slices.Sorted(maps.Keys(before)), slices.Sorted(maps.Keys(after)), out)
			}
		})
	}
}

// TestRestoreScript_Failures: a restore that cannot finish exits non-zero,
// says why, and leaves the database as it was.
func TestRestoreScript_Failures(t *testing.T) {
	s := pg(t)
	shop := s.newDatabase(t, "shop")
	s.items(t, shop, "apple")
	// Enough data that a dump cut short breaks inside it.
	s.psql(t, shop, "INSERT INTO items SELECT 'filler-' || i || repeat('x', i % 50) FROM generate_series(1, 2000) AS i")
	dumps := t.TempDir()
	good := s.backup(t, shop, dumps, "shop", "5")
	b, err := os.ReadFile(filepath.Join(dumps, good))
	if err != nil {
		t.Fatal(err)
	}
	truncated := DumpName("shop", time.Now().Add(time.Hour))
	write(t, dumps, truncated, string(b[:len(b)*2/3]))
	garbage := DumpName("shop", time.Now().Add(-time.Hour))
	write(t, dumps, garbage, "not a pg_dump archive")
	empty := t.TempDir()
	write(t, empty, DumpName("shop-eu", time.Now()), "another Database's dump")

	target := s.newDatabase(t, "shop_copy")
	s.items(t, target, "untouched")

	tests := []struct {
		name    string
		dir     string
		env     map[string]string
		wantOut []string
	}{
		{
			name:    "named file missing",
			dir:     dumps,
			env:     map[string]string{"RESTORE_FILE": "shop-20000101T000000Z.dump"},
			wantOut: []string{"shop-20000101T000000Z.dump not found in " + dumps, good, truncated},
		},
		{
			name:    "no dump of the prefix",
			dir:     empty,
			env:     map[string]string{"RESTORE_FILE": "latest"},
			wantOut: []string{"no dump of shop in " + empty},
		},
		{
			name:    "file outside the directory",
			dir:     dumps,
			env:     map[string]string{"RESTORE_FILE": "../" + good},
			wantOut: []string{"RESTORE_FILE must be 'latest' or a file name"},
		},
		{
			name:    "not an archive",
			dir:     dumps,
			env:     map[string]string{"RESTORE_FILE": garbage},
			wantOut: []string{"is not an archive pg_restore can read"},
		},
		{
			name:    "archive cut short",
			dir:     dumps,
			env:     map[string]string{"RESTORE_FILE": "latest"},
			wantOut: []string{"pg_restore of " + truncated + " failed; database shop_copy was left as it was"},
		},
		{
			name:    "wrong password",
			dir:     dumps,
			env:     map[string]string{"RESTORE_FILE": good, "PGPASSWORD": randomSecret("wrong")},
			wantOut: []string{"password authentication failed"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := s.scriptEnv(target, tt.dir, "shop")
			maps.Copy(env, tt.env)

			out, err := runScript(t, RestoreScript(), env)

			if err == nil {
				t.Fatalf("restore succeeded, want a failure:\n%s", out)
			}
			for _, w := range tt.wantOut {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			if got := s.rows(t, target); got != "untouched" {
				t.Errorf("rows after the failed restore = %q, want %q", got, "untouched")
			}
		})
	}
}
