# rudder — a Helm-chart-backed hybrid Kubernetes operator.
# `make help` lists the targets. Every tool is built from the Go module proxy into bin/.

SHELL := /usr/bin/env bash -o pipefail
.SHELLFLAGS := -ec
.DEFAULT_GOAL := help

BIN       := $(CURDIR)/bin
CLUSTER   := $(BIN)/cluster
export PATH := $(BIN):$(PATH)
# envtest finds etcd, kube-apiserver and kubectl here.
export KUBEBUILDER_ASSETS := $(BIN)

GO_TEST_FLAGS ?= -count=1
E2E_TIMEOUT   ?= 40m

##@ General

.PHONY: help
help: ## Show this help.
	@awk 'BEGIN {FS = ":.*##"; printf "Usage: make \033[36m<target>\033[0m\n"} /^[a-zA-Z_0-9-]+:.*?##/ { printf "  \033[36m%-16s\033[0m %s\n", $$1, $$2 } /^##@/ { printf "\n\033[1m%s\033[0m\n", substr($$0, 5) }' $(MAKEFILE_LIST)

##@ Build

.PHONY: build
build: ## Build bin/manager and the command line bin/rudder (also bin/kubectl-rudder, the kubectl plugin).
	go build -o $(BIN)/manager ./cmd/manager
	go build -o $(BIN)/rudder ./cmd/rudder
	ln -sf rudder $(BIN)/kubectl-rudder

.PHONY: tools
tools: ## Build etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kubectl, kwok and helm into bin/ (pinned; skips what is built).
	hack/tools.sh

.PHONY: manifests
manifests: ## Generate config/crd/bases/ from watches.yaml and the charts (rudder manifests; docs/chart-conventions.md).
	go run ./cmd/rudder manifests --watches-file watches.yaml --output-dir config/crd/bases

##@ Local cluster

.PHONY: cluster-up
cluster-up: tools ## Start a local control plane with kwok nodes; writes bin/cluster/kubeconfig.
	hack/cluster-up.sh

.PHONY: cluster-down
cluster-down: ## Stop the local control plane started by cluster-up and remove its state.
	hack/cluster-down.sh

##@ Run and test

.PHONY: run
run: tools build ## Run rudder in the foreground (starts a local cluster when KUBECONFIG is not set).
	hack/run.sh

.PHONY: test
test: tools test-unit test-e2e ## Run every test: unit, integration (envtest) and end-to-end (local cluster).

.PHONY: test-unit
test-unit: ## Run unit and integration tests (envtest on the binaries in bin/).
	go test $(GO_TEST_FLAGS) ./...

.PHONY: test-e2e
test-e2e: tools build ## Run end-to-end tests on the local cluster (started and stopped around the tests).
	hack/e2e.sh $(E2E_TIMEOUT)

.PHONY: bench
bench: tools build ## Measure rudder on the local cluster: time to Running, CPU and memory (RUDDER_BENCH_WEBAPPS, default 200).
	hack/e2e.sh 60m -tags bench -run '^$$' -bench . -benchtime 1x -v ./test/bench/

.PHONY: lint
lint: ## gofmt, go vet, golangci-lint, helm lint and the chart gate (charts render with every sample; samples pass their CRDs).
	hack/lint.sh
