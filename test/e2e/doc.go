// Package e2e runs rudder's end-to-end tests: the manager binary, started as
// a subprocess, against the local cluster of hack/cluster-up.sh, driven with
// the kubectl and helm commands of the seed document. Run them with
// `make test-e2e`, which provides KUBECONFIG and RUDDER_MANAGER_BIN.
// It must never import rudder's internal packages other than testenv, shard and
// watches: it drives the built binary.
package e2e
