#!/usr/bin/env bash
# Builds the pinned tools rudder's local cluster, tests and lint need into bin/,
# from the Go module proxy only (no downloads of release tarballs: this machine
# has no internet).
#
# Usage: hack/tools.sh [GROUP|TOOL]...     (no argument: every tool)
#   cluster  etcd kube-apiserver kube-controller-manager kube-scheduler kubectl kwok
#            (make cluster-up; make run when it starts the local cluster)
#   test     the cluster's tools, helm and helm3 (make test, make test-e2e, the benchmarks)
#   lint     golangci-lint, govulncheck and vulndb, and what helm lint and the chart
#            gate run: helm, etcd, kube-apiserver (make lint)
#   TOOL     one of the tools above by name; vulndb is bin/vulndb/, the Go
#            vulnerability database govulncheck reads (-db file://$PWD/bin/vulndb)
#
# Each tool has a stamp file bin/.stamps/<tool> holding the version it was built
# at; a tool is rebuilt only when its binary or stamp is missing or the stamp
# names another version. Each build prints a line naming the tool before it
# starts and its duration after. The first build of the Kubernetes binaries takes
# minutes on 2 cores; afterwards the Go build cache makes a rebuild take seconds.
set -euo pipefail

# Pinned versions. The control plane comes from hack/tools/go.mod (k8s.io/kubernetes
# with its staging replaces, and etcd); these two must match that file, which is
# checked below so that a go.mod bump cannot leave stale binaries behind.
KUBERNETES_VERSION=v1.37.2
ETCD_VERSION=v3.7.0
KWOK_VERSION=v0.8.0
# bin/helm is the Helm rudder is built on (go.mod's helm.sh/helm/v4); bin/helm3
# is the last Helm 3, which the tests use to show releases stay readable by it.
HELM_VERSION=v4.3.2
HELM3_VERSION=v3.21.4
GOLANGCI_LINT_VERSION=v2.15.0
GOVULNCHECK_VERSION=v1.9.0
# The Go vulnerability database: golang.org/x/vulndb holds the advisories as OSV
# files (data/osv/) and the command that indexes them (cmd/indexdb). Bump it to
# a newer pseudo-version the module proxy serves to learn of newer advisories.
VULNDB_VERSION=v0.0.0-20261105234957-e22db6528018

CLUSTER_TOOLS=(etcd kube-apiserver kube-controller-manager kube-scheduler kubectl kwok)
TEST_TOOLS=("${CLUSTER_TOOLS[@]}" helm helm3)
LINT_TOOLS=(golangci-lint govulncheck vulndb helm etcd kube-apiserver)
ALL_TOOLS=("${TEST_TOOLS[@]}" golangci-lint govulncheck vulndb)

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# BIN may be overridden to build somewhere else than the worktree's bin/.
BIN=${RUDDER_TOOLS_BIN:-$ROOT/bin}
STAMPS=$BIN/.stamps
TOOLS_MODULE=$ROOT/hack/tools

log() { echo "tools: $*"; }

# up_to_date TOOL VERSION: bin/TOOL (a binary, or vulndb's directory) exists
# and was stamped with VERSION.
up_to_date() {
  local tool=$1 version=$2
  [[ -x $BIN/$tool && -f $STAMPS/$tool && $(<"$STAMPS/$tool") == "$version" ]]
}

# stamp TOOL VERSION: record that bin/TOOL is now at VERSION.
stamp() {
  printf '%s\n' "$2" >"$STAMPS/$1"
}

# building TOOL VERSION WHAT: announce a build; built TOOL VERSION: its end.
building() {
  log "building $1 $2 ($3)"
  build_started=$SECONDS
}
built() {
  stamp "$1" "$2"
  log "built $1 $2 in $((SECONDS - build_started))s"
}

# require_in_tools_module MODULE VERSION: fail when hack/tools/go.mod pins
# another version than this script announces.
require_in_tools_module() {
  local module=$1 version=$2
  if ! grep -Eq "^[[:space:]]*(require[[:space:]]+)?${module//./\\.}[[:space:]]+${version//./\\.}([[:space:]]|$)" "$TOOLS_MODULE/go.mod"; then
    echo "hack/tools/go.mod does not require $module $version; update the pins at the top of $0" >&2
    exit 1
  fi
}

# kubernetes_ldflags: the version Kubernetes' own build scripts stamp in. Without
# it the binaries report v0.0.0-master: /version of the API server would then
# break Helm charts that check .Capabilities.KubeVersion or a kubeVersion range.
# -s -w drop the symbol tables (stack traces still work): smaller, faster links.
kubernetes_ldflags() {
  local version=${KUBERNETES_VERSION#v} flags="-s -w" package
  local major=${version%%.*} minor=${version#*.}
  minor=${minor%%.*}
  for package in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    flags+=" -X $package.gitVersion=$KUBERNETES_VERSION -X $package.gitMajor=$major"
    flags+=" -X $package.gitMinor=$minor -X $package.gitTreeState=clean"
  done
  echo "$flags"
}

# build_from_tools_module TOOL VERSION PACKAGE [GO BUILD FLAGS...]: go build
# PACKAGE inside the tools module (so its go.mod, replaces and go.sum apply) into
# bin/TOOL. go build -o names the binary, which matters for etcd: go install
# would call it "server".
build_from_tools_module() {
  local tool=$1 version=$2 package=$3
  shift 3
  if up_to_date "$tool" "$version"; then
    log "$tool $version: up to date"
    return
  fi
  building "$tool" "$version" "$package"
  (cd "$TOOLS_MODULE" && go build "$@" -o "$BIN/$tool" "$package")
  built "$tool" "$version"
}

# install_at_version TOOL VERSION PACKAGE [STAMP]: go install PACKAGE@VERSION
# as bin/TOOL (helm3 is Helm 3's cmd/helm). These tools have their own go.mod,
# so they build without the tools module. STAMP (default VERSION) is what the
# stamp must say for bin/TOOL to be up to date.
install_at_version() {
  local tool=$1 version=$2 package=$3 stamp=${4:-$2} scratch=$BIN/.gobin-$1
  if up_to_date "$tool" "$stamp"; then
    log "$tool $stamp: up to date"
    return
  fi
  building "$tool" "$stamp" "$package@$version"
  rm -rf "$scratch"
  GOBIN=$scratch go install "$package@$version"
  mv "$scratch/${package##*/}" "$BIN/$tool"
  rm -rf "$scratch"
  built "$tool" "$stamp"
}

# build_vulndb: bin/vulndb/, the database govulncheck reads with -db file://,
# laid out as vuln.go.dev serves it (index/db.json, index/modules.json,
# index/vulns.json, ID/<id>.json, each with a .gz twin) by the vulndb module's
# own cmd/indexdb from the module's OSV files. indexdb is built in a scratch
# directory and not kept; the database replaces the old one only when complete.
build_vulndb() {
  local version=$VULNDB_VERSION scratch=$BIN/.vulndb-build module_dir
  if up_to_date vulndb "$version"; then
    log "vulndb $version: up to date"
    return
  fi
  building vulndb "$version" "golang.org/x/vulndb/cmd/indexdb@$version over the module's data/osv"
  rm -rf "$scratch"
  module_dir=$(go mod download -json "golang.org/x/vulndb@$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  [[ -d $module_dir/data/osv ]] || { echo "golang.org/x/vulndb@$version has no data/osv (in '$module_dir')" >&2; exit 1; }
  GOBIN=$scratch/bin go install "golang.org/x/vulndb/cmd/indexdb@$version"
  "$scratch/bin/indexdb" -vulns "$module_dir/data/osv" -out "$scratch/db"
  rm -rf "$BIN/vulndb"
  mv "$scratch/db" "$BIN/vulndb"
  rm -rf "$scratch"
  built vulndb "$version"
}

# build TOOL: build one tool if it is not up to date.
build() {
  local k8s_flags
  case $1 in
    etcd)
      build_from_tools_module etcd "$ETCD_VERSION" go.etcd.io/etcd/server/v3 -ldflags "-s -w" ;;
    kube-apiserver | kube-controller-manager | kube-scheduler | kubectl)
      k8s_flags=$(kubernetes_ldflags)
      build_from_tools_module "$1" "$KUBERNETES_VERSION" "k8s.io/kubernetes/cmd/$1" -ldflags "$k8s_flags" ;;
    kwok)
      install_at_version kwok "$KWOK_VERSION" sigs.k8s.io/kwok/cmd/kwok ;;
    helm)
      install_at_version helm "$HELM_VERSION" helm.sh/helm/v4/cmd/helm ;;
    helm3)
      install_at_version helm3 "$HELM3_VERSION" helm.sh/helm/v3/cmd/helm ;;
    golangci-lint | govulncheck)
      # Both type-check rudder's module and the standard library of the Go
      # that builds it (go.mod's toolchain), and refuse a Go newer than their
      # own: build them with that Go, and again when it changes.
      local go_version package version
      go_version=$(cd "$ROOT" && go env GOVERSION)
      if [[ $1 == golangci-lint ]]; then
        package=github.com/golangci/golangci-lint/v2/cmd/golangci-lint version=$GOLANGCI_LINT_VERSION
      else
        package=golang.org/x/vuln/cmd/govulncheck version=$GOVULNCHECK_VERSION
      fi
      GOTOOLCHAIN=$go_version install_at_version "$1" "$version" "$package" "$version $go_version" ;;
    vulndb)
      build_vulndb ;;
    *)
      echo "hack/tools.sh: unknown tool or group '$1' (groups: cluster, test, lint; tools: ${ALL_TOOLS[*]})" >&2
      exit 2 ;;
  esac
}

main() {
  local arg tool tools=() seen=" "
  (($# > 0)) || set -- all
  for arg in "$@"; do
    case $arg in
      all) tools+=("${ALL_TOOLS[@]}") ;;
      cluster) tools+=("${CLUSTER_TOOLS[@]}") ;;
      test) tools+=("${TEST_TOOLS[@]}") ;;
      lint) tools+=("${LINT_TOOLS[@]}") ;;
      *) tools+=("$arg") ;;
    esac
  done

  mkdir -p "$BIN" "$STAMPS"
  require_in_tools_module k8s.io/kubernetes "$KUBERNETES_VERSION"
  require_in_tools_module go.etcd.io/etcd/server/v3 "$ETCD_VERSION"
  for tool in "${tools[@]}"; do
    [[ $seen == *" $tool "* ]] && continue
    seen+="$tool "
    build "$tool"
  done
}

main "$@"
