//go:build tools

// Package tools pins the control-plane binaries that rudder's tests and local
// cluster run. They are built from the Go module proxy by `make tools`; this
// module is separate so that k8s.io/kubernetes never enters rudder's own go.mod.
package tools

import (
	_ "go.etcd.io/etcd/server/v3"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
