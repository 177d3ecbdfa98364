// Package action holds the steps that act on a release: install, upgrade,
// reinstall, rollback and the end of one, remediation, unlock, uninstall, and
// the upkeep of a deployed release (maintain: its objects watched, assessed
// and repaired, its chart tests run).
// Each step is a type holding only what it uses; the controller (package
// reconcile) builds them once per kind and runs the one plan picked, on the
// release it observed (Release), with a Helm client that acts as the
// resource's account.
//
// A step records what storage must show next and what failed in the
// controller's memory (Memory), says what happened in events and in the
// observation's Outcome, and never returns a Helm failure as an error: the
// controller's backoff would retry without bound, where the failures Memory
// counts bound the tries.
//
// It must never import the controller (package reconcile) or what builds on
// it, nor run Helm other than through package helm.
package action
