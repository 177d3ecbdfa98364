// Package bundle makes rudder's Operator Lifecycle Manager (OLM) bundle
// (`rudder bundle`, `make bundle`): bundle/manifests with a
// ClusterServiceVersion and the CRDs, and bundle/metadata/annotations.yaml.
// Everything comes from config/ (the CRDs, RBAC and manager Deployment of
// config/default, the samples of config/samples) and the README's opening, so
// the bundle never says anything by hand that config/ says already. It reads
// and writes files only, and never talks to a cluster: it must never import
// controller-runtime or client-go, nor the reconcile, manager, cli, admission
// or preview packages.
package bundle
