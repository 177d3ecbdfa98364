// Package kinds holds no code, only integration tests of the kinds rudder
// embeds: each CRD of config/crd/bases, its chart and its samples, served by a
// real manager on the embedded watches.yaml against envtest. It drives rudder
// through the manager and never imports the reconciler (internal/reconcile).
package kinds
