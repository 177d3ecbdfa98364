package backup

import (
	"strings"
	"text/template"
)

// The environment the scripts read. The PG* variables are libpq's own; set
// PGUSER and PGPASSWORD from the Database's credentials Secret by reference so
// that no secret is ever part of a script, a Helm value or a log line.
const (
	EnvHost     = "PGHOST"
	EnvPort     = "PGPORT"
	EnvUser     = "PGUSER"
	EnvPassword = "PGPASSWORD"
	EnvDatabase = "PGDATABASE"
	// EnvDir is the directory the backup volume is mounted at.
	EnvDir = "BACKUP_DIR"
	// EnvPrefix starts every dump's name; the Database's name, so several
	// Databases can share a volume. Lowercase letters, digits, '-' and '.',
	// starting with a letter or digit. A restore reads the dumps of the
	// source Database, so there it is the source's name.
	EnvPrefix = "BACKUP_PREFIX"
	// EnvRetention is how many dumps of the prefix a backup keeps, at least 1.
	EnvRetention = "BACKUP_RETENTION"
	// EnvRestoreFile is the dump a restore reads: a file name in EnvDir, or
	// "latest" for the newest dump of the prefix.
	EnvRestoreFile = "RESTORE_FILE"
	// EnvReportFile, optional, is a file the scripts report to: the backup
	// script the dumps of the prefix kept, one per line, oldest first; the
	// restore script the dump it restored. The Jobs set /dev/termination-log,
	// where the hooks read it back as the container's termination message.
	EnvReportFile = "REPORT_FILE"
	// EnvWaitSeconds, optional, bounds how long a script waits for the server
	// to accept connections; DefaultWaitSeconds when unset.
	EnvWaitSeconds = "DB_WAIT_SECONDS"
)

// DefaultWaitSeconds is how long the scripts wait for the server by default.
const DefaultWaitSeconds = 120

// StalePartialMinutes is how long a partial dump of the prefix must have gone
// unwritten before a successful backup removes it as left over by an
// interrupted run (a younger one may belong to a run still going).
const StalePartialMinutes = 60

// Script returns the backup script; the container runs it with /bin/sh
// (command: [/bin/sh, -c, script]). It waits for the server, dumps the
// database in pg_dump's custom format into a hidden ".partial" file, reads the
// archive back, renames it to DumpName(prefix, now), and only then deletes
// all but the newest EnvRetention dumps of the prefix and stale partial dumps
// of the prefix. Any failure exits non-zero having deleted nothing.
func Script() string { return backupScript }

// RestoreScript returns the restore script, run like Script against the
// server of the Database being restored into. It resolves EnvRestoreFile,
// checks the archive, waits for the server and restores with pg_restore in
// one transaction (dropping the dump's objects first, owned by EnvUser, no
// grants), so a failed restore leaves the database as it was.
func RestoreScript() string { return restoreScript }

var (
	backupScript  = render("backup")
	restoreScript = render("restore")
)

type scriptData struct {
	Name         string
	Required     []string
	StampGlob    string
	DumpExt      string
	WaitSeconds  int
	StaleMinutes int
}

func render(name string) string {
	data := scriptData{
		Name:         name,
		Required:     []string{EnvHost, EnvPort, EnvUser, EnvPassword, EnvDatabase, EnvDir, EnvPrefix},
		StampGlob:    stampGlob,
		DumpExt:      DumpExt,
		WaitSeconds:  DefaultWaitSeconds,
		StaleMinutes: StalePartialMinutes,
	}
	if name == "backup" {
		data.Required = append(data.Required, EnvRetention)
	} else {
		data.Required = append(data.Required, EnvRestoreFile)
	}
	var b strings.Builder
	if err := scripts.ExecuteTemplate(&b, name, data); err != nil {
		panic(err) // the templates are constants; TestScripts covers them
	}
	return b.String()
}

var scripts = template.Must(template.New("").Parse(commonTemplate + backupTemplate + restoreTemplate))

// commonTemplate checks the environment and waits for the server. Dump names
// are only ever matched with the strict pattern "$BACKUP_PREFIX-<stamp>.dump",
// never "$BACKUP_PREFIX-*", so one prefix never matches another's dumps.
const commonTemplate = `{{define "common" -}}
#!/bin/sh
# rudder {{.Name}} script, rendered by internal/hook/backup; do not edit.
set -eu
export LC_ALL=C

say() { echo "{{.Name}}: $*"; }
fail() { echo "{{.Name}}: error: $*" >&2; exit 1; }

{{range .Required -}}
[ -n "{{printf "${%s:-}" .}}" ] || fail "{{.}} is not set"
{{end -}}
case $BACKUP_PREFIX in
*[!a-z0-9.-]* | [!a-z0-9]*) fail "BACKUP_PREFIX '$BACKUP_PREFIX' must be lowercase letters, digits, '-' or '.', starting with a letter or digit" ;;
esac
[ -d "$BACKUP_DIR" ] || fail "BACKUP_DIR $BACKUP_DIR is not a directory"
wait_seconds=${DB_WAIT_SECONDS:-{{.WaitSeconds}}}
case $wait_seconds in
'' | *[!0-9]*) fail "DB_WAIT_SECONDS must be a whole number of seconds, got '$wait_seconds'" ;;
esac

# wait_for_server polls the server every 2 seconds until it accepts
# connections, for at most $wait_seconds seconds.
wait_for_server() {
	say "waiting up to ${wait_seconds}s for the server at $PGHOST:$PGPORT"
	tries=$(((wait_seconds + 1) / 2))
	until pg_isready --quiet --timeout=2; do
		tries=$((tries - 1))
		[ "$tries" -gt 0 ] || fail "the server at $PGHOST:$PGPORT did not accept connections within ${wait_seconds}s"
		sleep 2
	done
	say "the server at $PGHOST:$PGPORT accepts connections"
}

# bytes prints the size of file $1 (arithmetic drops the padding some wc add).
bytes() {
	n=$(wc -c <"$1")
	echo $((n))
}
{{end}}`

const backupTemplate = `{{define "backup"}}{{template "common" .}}
case $BACKUP_RETENTION in
'' | *[!0-9]*) fail "BACKUP_RETENTION must be a whole number of at least 1, got '$BACKUP_RETENTION'" ;;
esac
[ "$BACKUP_RETENTION" -ge 1 ] || fail "BACKUP_RETENTION must be a whole number of at least 1, got '$BACKUP_RETENTION'"
[ -w "$BACKUP_DIR" ] || fail "BACKUP_DIR $BACKUP_DIR is not writable"

wait_for_server

# Claim a name no other run uses: create the partial file exclusively, then
# make sure the final name is free too (a run in the same second may have
# finished already); otherwise wait for the next second.
partial=
claims=5
while :; do
	name="$BACKUP_PREFIX-$(date -u +%Y%m%dT%H%M%SZ){{.DumpExt}}"
	if (set -C && : >"$BACKUP_DIR/.$name.partial") 2>/dev/null; then
		if [ ! -e "$BACKUP_DIR/$name" ]; then
			partial="$BACKUP_DIR/.$name.partial"
			break
		fi
		rm -f -- "$BACKUP_DIR/.$name.partial"
	fi
	claims=$((claims - 1))
	[ "$claims" -gt 0 ] || fail "could not claim a new dump name in $BACKUP_DIR (last tried $name)"
	sleep 1
done
trap 'rm -f -- "$partial"' EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM

say "dumping database $PGDATABASE into .$name.partial"
pg_dump --no-password --format=custom --file="$partial" ||
	fail "pg_dump of database $PGDATABASE failed; no dump was kept and none was removed"
pg_restore --list "$partial" >/dev/null ||
	fail "the archive pg_dump wrote cannot be read back; no dump was kept and none was removed"
mv -- "$partial" "$BACKUP_DIR/$name"
say "wrote $name ($(bytes "$BACKUP_DIR/$name") bytes)"

# Keep the newest $BACKUP_RETENTION dumps of this prefix. Their names sort by
# time, and the shell expands a pattern in sorted order.
count=0
for f in "$BACKUP_DIR/$BACKUP_PREFIX"-{{.StampGlob}}{{.DumpExt}}; do
	if [ -f "$f" ]; then count=$((count + 1)); fi
done
excess=$((count - BACKUP_RETENTION))
for f in "$BACKUP_DIR/$BACKUP_PREFIX"-{{.StampGlob}}{{.DumpExt}}; do
	[ "$excess" -gt 0 ] || break
	if [ -f "$f" ] && [ "$f" != "$BACKUP_DIR/$name" ]; then
		rm -f -- "$f"
		excess=$((excess - 1))
		count=$((count - 1))
		say "removed ${f##*/} (keeping the newest $BACKUP_RETENTION)"
	fi
done

# Remove partial dumps of this prefix left by interrupted runs.
for f in "$BACKUP_DIR/.$BACKUP_PREFIX"-{{.StampGlob}}{{.DumpExt}}.partial; do
	if [ -f "$f" ] && [ -n "$(find "$f" -prune -mmin +{{.StaleMinutes}})" ]; then
		rm -f -- "$f"
		say "removed ${f##*/}, left by an interrupted run"
	fi
done

say "done: $name; dumps of $BACKUP_PREFIX kept: $count"
if [ -n "${REPORT_FILE:-}" ]; then
	for f in "$BACKUP_DIR/$BACKUP_PREFIX"-{{.StampGlob}}{{.DumpExt}}; do
		if [ -f "$f" ]; then echo "${f##*/}"; fi
	done >"$REPORT_FILE" || say "could not write the report to $REPORT_FILE"
fi
{{end}}`

const restoreTemplate = `{{define "restore"}}{{template "common" .}}
# dumps prints the names of this prefix's dumps, oldest first, or "none".
dumps() {
	list=
	for f in "$BACKUP_DIR/$BACKUP_PREFIX"-{{.StampGlob}}{{.DumpExt}}; do
		if [ -f "$f" ]; then list="$list ${f##*/}"; fi
	done
	echo "${list:- none}"
}

case $RESTORE_FILE in
latest)
	file=
	for f in "$BACKUP_DIR/$BACKUP_PREFIX"-{{.StampGlob}}{{.DumpExt}}; do
		if [ -f "$f" ]; then file=${f##*/}; fi
	done
	[ -n "$file" ] || fail "no dump of $BACKUP_PREFIX in $BACKUP_DIR to restore (looked for $BACKUP_PREFIX-<YYYYmmddTHHMMSSZ>{{.DumpExt}})"
	say "the latest dump of $BACKUP_PREFIX is $file"
	;;
*/* | .*) fail "RESTORE_FILE must be 'latest' or a file name in $BACKUP_DIR, got '$RESTORE_FILE'" ;;
*)
	file=$RESTORE_FILE
	[ -f "$BACKUP_DIR/$file" ] || fail "$file not found in $BACKUP_DIR; dumps of $BACKUP_PREFIX there:$(dumps)"
	;;
esac
pg_restore --list "$BACKUP_DIR/$file" >/dev/null ||
	fail "$file is not an archive pg_restore can read"

wait_for_server

# One transaction: a failure rolls back the drops too, so the database is
# either restored or as it was.
say "restoring $file ($(bytes "$BACKUP_DIR/$file") bytes) into database $PGDATABASE"
pg_restore --no-password --clean --if-exists --no-owner --no-privileges \
	--single-transaction --exit-on-error --dbname="$PGDATABASE" "$BACKUP_DIR/$file" ||
	fail "pg_restore of $file failed; database $PGDATABASE was left as it was"
say "restored $file into database $PGDATABASE"
if [ -n "${REPORT_FILE:-}" ]; then
	printf '%s' "$file" >"$REPORT_FILE" || say "could not write the report to $REPORT_FILE"
fi
{{end}}`
