// Package lease tells whether the rudder process that left a revision
// pending still runs. Each manager process holds a Lease named after its
// holder id (the LabelHolder value on the revisions it writes) and renews it
// while it runs; a pending revision is another process's to finish while
// that Lease is fresh, and abandoned only once it has expired or is gone.
// It must never import Helm or package helm, nor the reconcile, manager, cli,
// admission or preview packages.
package lease
