// Package stored observes Helm's release storage (the sh.helm.release.v1.*
// Secrets) through a cache of their metadata alone: a release's revisions,
// their Helm status and rudder's labels, without reading or decoding a release.
// It never writes: Helm does, through the helm package.
// It must never import Helm or package helm, nor the reconcile, manager, cli,
// admission or preview packages.
package stored
