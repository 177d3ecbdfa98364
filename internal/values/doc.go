// Package values computes the values a release is installed with — the custom
// resource's .spec with the watch's override values on top — and their digest.
// It must not talk to the cluster or to Helm's release storage: it must never
// import controller-runtime or client-go, nor the reconcile, manager, cli,
// admission or preview packages.
package values
