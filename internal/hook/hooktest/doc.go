// Package hooktest checks what every hook's reading of a custom resource's
// spec must do, for the fuzz tests of the hooks under internal/hook/*. Only
// tests import it; it must not start servers or talk to a cluster.
// It must never import controller-runtime, client-go, a hook, Helm or package
// helm, nor the reconcile, manager, cli, admission or preview packages.
package hooktest
