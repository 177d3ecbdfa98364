// Package charttest runs a deployed revision's chart tests (helm test) for
// the controller: when a request or the kind's test.enable makes them due,
// on a goroutine of their own so that no worker waits on the test pods, and
// records how a run ended on the revision, in the Tested condition and in an
// event.
//
// A run under way and the last one recorded live in the controller's memory
// (Memory), which a restart loses: a run cut short is then started again.
//
// It must never import the controller (package reconcile) or its steps
// (package action), nor run Helm other than through package helm.
package charttest
