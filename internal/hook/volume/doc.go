// Package volume is the "volume" hook of the Database kind. A StatefulSet
// never changes the claims it made (its claim templates are immutable), so
// growing spec.storageSize would not grow the data; this hook expands the
// claim data-<name>-0 to spec.storageSize, and the backup claim <name>-backup
// to spec.backup.storageSize, and reports how that goes. It grows only claims
// that are the Database's: the backup claim the backup hook made, and a data
// claim made for it (hook.AnnotationGeneratedFor, which it records on a claim
// the release's StatefulSet made: hook.MadeByRelease).
// It must never import Helm or package helm, nor the reconcile, manager, cli,
// admission or preview packages.
package volume
