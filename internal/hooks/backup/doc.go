// Package backup owns the shell scripts that back up and restore a Database's
// PostgreSQL server (run with /bin/sh in the official postgres image), and the
// dump file names they use, so the hook that schedules them computes status
// from the same names. It builds no Kubernetes objects and holds no secrets:
// the scripts read credentials from their environment.
package backup
