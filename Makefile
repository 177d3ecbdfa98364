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
# Build with the Go toolchain go.mod names (fetched from the module proxy when
# the machine's Go is older), not the machine's: its standard library is what
# govulncheck checks. Modules that name none (hack/tools) keep the machine's.
export GOTOOLCHAIN ?= auto

GO_TEST_FLAGS ?= -count=1
# make fuzz: how long each fuzz target runs (a Go duration, or a count such as 1000x).
FUZZTIME      ?= 10s
E2E_TIMEOUT   ?= 40m
BENCH_TIMEOUT ?= 240m

# make bundle: the release the OLM bundle describes, and the manager image it installs.
VERSION ?= 0.1.0
IMG     ?= rudder:latest
KUSTOMIZE_DIR ?= config/default

# Binaries are built as the Dockerfile builds the image's manager: static, with
# no cgo, symbol table or build paths, so that the benchmarks measure what a
# cluster runs. (With cgo, kustomize's import of the plugin package makes the
# linker export every symbol: a larger binary, more of it mapped and resident.)
GO_BUILD := CGO_ENABLED=0 go build -trimpath -ldflags="-s -w"

# make bench: how many WebApps of how many replicas (test/bench reads both).
RUDDER_BENCH_WEBAPPS  ?= 1000
RUDDER_BENCH_REPLICAS ?= 2
# make bench-memory: how many WebApps of 1 replica, in how many namespaces.
RUDDER_BENCH_MEMORY_WEBAPPS    ?= 10000
RUDDER_BENCH_MEMORY_NAMESPACES ?= 10
# make bench-shards: how many WebApps of 1 replica in how many namespaces, and how many shards.
RUDDER_BENCH_SHARD_WEBAPPS    ?= 10000
RUDDER_BENCH_SHARD_NAMESPACES ?= 60
RUDDER_BENCH_SHARDS           ?= 3
# ... and in which filtering modes, one cluster each (client: the API server
# ignores shard selectors; server: started with ShardedListAndWatch=true).
RUDDER_BENCH_SHARD_MODES      ?= client server

# kwok_room exports the kwok nodes that give a cluster hack/e2e.sh starts room
# for $(1) pods: nodes of 1000 pods (4000 past 15000 pods, as each node has a
# /20 of a /16) and one spare. A running cluster with too little room gets
# kwok nodes from the bench itself.
kwok_room = per_node=1000; if (( $(1) > 15000 )); then per_node=4000; fi; \
	nodes=$$(( ($(1) + per_node - 1) / per_node + 1 )); if (( nodes < 2 )); then nodes=2; fi; \
	export RUDDER_KWOK_NODES=$${RUDDER_KWOK_NODES:-$$nodes} RUDDER_KWOK_PODS_PER_NODE=$${RUDDER_KWOK_PODS_PER_NODE:-$$per_node}

##@ General

.PHONY: help
help: ## Show this help.
	@awk 'BEGIN {FS = ":.*##"; printf "Usage: make \033[36m<target>\033[0m\n"} /^[a-zA-Z_0-9-]+:.*?##/ { printf "  \033[36m%-16s\033[0m %s\n", $$1, $$2 } /^##@/ { printf "\n\033[1m%s\033[0m\n", substr($$0, 5) }' $(MAKEFILE_LIST)

##@ Build

.PHONY: build
build: manager ## Build bin/manager and the command line bin/rudder (also bin/kubectl-rudder, the kubectl plugin, and bin/kubectl_complete-rudder, its completion).
	$(GO_BUILD) -o $(BIN)/rudder ./cmd/rudder
	ln -sf rudder $(BIN)/kubectl-rudder
	ln -sf rudder $(BIN)/kubectl_complete-rudder

.PHONY: manager
manager: ## Build bin/manager only (what make run runs).
	$(GO_BUILD) -o $(BIN)/manager ./cmd/manager

.PHONY: baseline
baseline: ## Build bin/baseline, the benchmark's baseline operator (helm-operator-plugins' stock reconciler, test/bench/baseline).
	$(GO_BUILD) -o $(BIN)/baseline ./test/bench/baseline

.PHONY: tools
tools: ## Build every pinned tool into bin/: the local cluster's, helm, golangci-lint, govulncheck and its database (skips what is built).
	hack/tools.sh

# The tools each target uses, and no more (hack/tools.sh names each group's):
# the local cluster's, and those with helm for the tests. make lint and make run
# build theirs from their scripts (hack/lint.sh, hack/run.sh).
.PHONY: tools-cluster tools-test
tools-cluster:
	hack/tools.sh cluster
tools-test:
	hack/tools.sh test

.PHONY: manifests
manifests: ## Generate config/crd/bases/ from watches.yaml and the charts (rudder manifests; docs/chart-conventions.md).
	go run ./cmd/rudder manifests --watches-file watches.yaml --output-dir config/crd/bases

.PHONY: bundle
bundle: ## Generate the OLM bundle in bundle/ from config/ and the README for VERSION (0.1.0) and IMG (rudder:latest) (rudder bundle).
	go run ./cmd/rudder bundle --version $(VERSION) --image $(IMG) --config-dir config --readme README.md --output-dir bundle

##@ Deploy

.PHONY: deploy
deploy: ## Deploy rudder (config/default, or KUSTOMIZE_DIR=config/shards; image IMG) to the cluster of KUBECONFIG and wait for it to roll out.
	hack/tools.sh kubectl
	IMG=$(IMG) KUSTOMIZE_DIR=$(KUSTOMIZE_DIR) hack/deploy.sh deploy

.PHONY: undeploy
undeploy: ## Remove what deploy applied, except the CRDs (UNDEPLOY_CRDS=true removes them and every custom resource).
	hack/tools.sh kubectl
	IMG=$(IMG) KUSTOMIZE_DIR=$(KUSTOMIZE_DIR) hack/deploy.sh undeploy

##@ Local cluster

.PHONY: cluster-up
cluster-up: tools-cluster ## Start a local control plane with kwok nodes; writes bin/cluster/kubeconfig (FEATURE_GATES=ShardedListAndWatch=true: the API server filters shards).
	RUDDER_FEATURE_GATES=$(FEATURE_GATES) hack/cluster-up.sh

.PHONY: cluster-down
cluster-down: ## Stop the local control plane started by cluster-up and remove its state.
	hack/cluster-down.sh

##@ Run and test

.PHONY: run
run: manager ## Run rudder in the foreground (starts a local cluster when KUBECONFIG is not set); builds bin/manager and only the tools it uses.
	hack/run.sh

.PHONY: test
test: ## Run every test: unit, integration (envtest), a short fuzzing of each target, end-to-end (local cluster); installs the system packages it needs first, and ends with each phase's and package's duration (hack/test.sh).
	hack/test.sh

.PHONY: packages
packages: ## Install the system packages the build and tests need when missing (apt-get, as root on Debian), else name the command to run (hack/packages.sh).
	hack/packages.sh ensure

.PHONY: test-unit
test-unit: ## Run unit and integration tests (envtest on the binaries in bin/), and the monitoring config's check (its own module).
	go test $(GO_TEST_FLAGS) ./...
	cd test/monitoring && go test $(GO_TEST_FLAGS) ./...

.PHONY: test-nocache
test-nocache: ## Run the reconciler's integration suite (envtest) with every cache of rudder's own off (RUDDER_NO_CACHES=true): each is only an optimisation.
	RUDDER_NO_CACHES=true go test $(GO_TEST_FLAGS) ./internal/reconcile/

.PHONY: test-fuzz
test-fuzz: ## Fuzz each target for 3s (make test's short run; make fuzz for longer).
	FUZZTIME=3s hack/fuzz.sh -parallel 1

.PHONY: fuzz
fuzz: ## Run each Go fuzz target for FUZZTIME (10s), one after another; go test runs their seeds already (hack/fuzz.sh).
	FUZZTIME=$(FUZZTIME) hack/fuzz.sh

.PHONY: test-e2e
test-e2e: tools-test build baseline ## Run end-to-end tests and the short benchmark on the local cluster (started and stopped around them).
	hack/e2e.sh $(E2E_TIMEOUT)

.PHONY: bench
bench: tools-test build baseline ## Benchmark floor, baseline and rudder on the local cluster; writes docs/benchmarks.md (RUDDER_BENCH_WEBAPPS=1000, RUDDER_BENCH_COLUMNS).
	$(call kwok_room,$(RUDDER_BENCH_WEBAPPS) * $(RUDDER_BENCH_REPLICAS)); \
	RUDDER_BENCH_WEBAPPS=$(RUDDER_BENCH_WEBAPPS) RUDDER_BENCH_REPLICAS=$(RUDDER_BENCH_REPLICAS) \
	hack/e2e.sh $(BENCH_TIMEOUT) -tags bench -run '^$$' -bench '^BenchmarkColumns$$' -benchtime 1x -v ./test/bench/

.PHONY: bench-memory
bench-memory: tools-test build ## One manager's resident memory and live heap as 10,000 WebApps are installed in steps (RUDDER_BENCH_MEMORY_WEBAPPS); writes docs/benchmarks.md.
	$(call kwok_room,$(RUDDER_BENCH_MEMORY_WEBAPPS)); \
	RUDDER_BENCH_MEMORY_WEBAPPS=$(RUDDER_BENCH_MEMORY_WEBAPPS) RUDDER_BENCH_MEMORY_NAMESPACES=$(RUDDER_BENCH_MEMORY_NAMESPACES) \
	hack/e2e.sh $(BENCH_TIMEOUT) -tags bench -run '^$$' -bench '^BenchmarkMemory$$' -benchtime 1x -v ./test/bench/

.PHONY: bench-shards
bench-shards: tools-test build ## One manager against 3 shards at 10,000 WebApps in 60 namespaces, on a cluster whose API server filters shards and on one that does not (RUDDER_BENCH_SHARD_MODES=server: one of them); writes docs/benchmarks.md.
	@if hack/cluster-up.sh --check >/dev/null 2>&1; then \
	  echo "bench-shards starts a cluster for each filtering mode: stop the running one first (make cluster-down)"; exit 1; fi
	$(call kwok_room,$(RUDDER_BENCH_SHARD_WEBAPPS)); \
	export RUDDER_BENCH_SHARD_WEBAPPS=$(RUDDER_BENCH_SHARD_WEBAPPS) RUDDER_BENCH_SHARD_NAMESPACES=$(RUDDER_BENCH_SHARD_NAMESPACES) RUDDER_BENCH_SHARDS=$(RUDDER_BENCH_SHARDS); \
	for mode in $(RUDDER_BENCH_SHARD_MODES); do \
	  case $$mode in client) gates= ;; server) gates=ShardedListAndWatch=true ;; \
	    *) echo "RUDDER_BENCH_SHARD_MODES: unknown mode $$mode; want client, server or both"; exit 1 ;; esac; \
	  RUDDER_FEATURE_GATES=$$gates hack/e2e.sh $(BENCH_TIMEOUT) -tags bench -run '^$$' -bench '^BenchmarkShards$$' -benchtime 1x -v ./test/bench/ || exit 1; \
	done

.PHONY: lint
lint: ## gofmt, go vet, golangci-lint, helm lint, the chart gate (charts render with every sample; samples pass their CRDs) and govulncheck (vulnerable code rudder calls).
	hack/lint.sh

.PHONY: vulncheck
vulncheck: ## govulncheck ./...: fails when rudder calls code with a known vulnerability (database bin/vulndb, from the golang.org/x/vulndb pinned in hack/tools.sh; make lint's last step).
	hack/vulncheck.sh
