// Package backup is the "backup" hook of the Database kind: it keeps a
// CronJob <name>-backup that dumps the database into a backup volume on a
// schedule, runs a backup on request, and reports the Jobs' real outcomes.
// Its "restore" hook (Restore) loads a new Database, once, from a dump of
// another Database's backups, in a Job, and holds Ready until it is done.
// It also owns the shell scripts the Jobs run (in the official postgres
// image) and the dump file names they use. The scripts read credentials from
// their environment: no secret passes through the hook.
// It must never import Helm or package helm, nor the reconcile, manager, cli,
// admission or preview packages.
package backup
