// Package ssa is how rudder owns the fields of a release's objects: it
// applies them by server-side apply under its own field manager, and tells
// drift as the fields it applies whose live values differ, so that what other
// managers own (an admission policy's sidecar, an autoscaler's replicas) is
// never compared nor replaced. It replaces a hand-written comparison of the
// rendered object with the live one and a JSON merge patch, which replaced
// whole lists. It must never import Helm or package helm, nor the reconcile,
// manager, cli, admission or preview packages.
package ssa
