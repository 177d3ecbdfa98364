// Package releasevalues computes the values a resource's release gets, in
// one pipeline that the reconciler, `rudder diff` and the admission webhook
// share (Pipeline): the resource's spec with its kind's override values on
// top (package values), over the values of its sources (package valuesfrom),
// then each of its kind's hooks' values in order (package hook). It also
// keeps what the values digest is computed from, which shows a Secret's
// identity and version in place of what it holds.
//
// It must never import Helm or package helm, nor the reconcile, manager, cli,
// admission or preview packages: they call it.
package releasevalues
