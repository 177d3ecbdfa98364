// Package manager assembles rudder: it loads the watches, builds the
// controller-runtime manager and its caches, registers one release reconciler
// per watched kind, serves health probes and metrics (HTTPS, to the clients
// the API server authorizes), and runs until stopped.
// It holds no reconcile logic.
// Only cmd/, cli, admission and preview import it, tests aside; it must never
// import package cli or package admission (cmd/manager adds the webhook through
// Options).
package manager
