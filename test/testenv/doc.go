// Package testenv starts a real etcd and kube-apiserver (envtest) with
// rudder's CRDs for integration tests, from the binaries `make tools` builds
// into bin/, and holds the helpers those tests share: a logger, waiting,
// test objects and their conditions, Helm revisions. Only tests import it,
// and it must never import any of rudder's packages, whose own tests import
// it.
package testenv
