#!/usr/bin/env bash
# Runs, against the local cluster of hack/cluster-up.sh, the short benchmark
# (./test/bench/), the acceptance tests with rudder in lockdown, and the
# end-to-end suite (./test/e2e/), one go test run after another; or only the go
# test arguments given after TIMEOUT.
#
# Usage: hack/e2e.sh TIMEOUT        e.g. hack/e2e.sh 40m
#
# A cluster that is already running is used and left running. A cluster this
# script starts is stopped when it ends, pass or fail, unless
# RUDDER_KEEP_CLUSTER=1. The tests find the cluster through KUBECONFIG and the
# operator binaries through RUDDER_MANAGER_BIN and RUDDER_BASELINE_BIN (the
# benchmark's baseline), bin/manager and bin/baseline unless set (a wrapper
# script can run the manager with another environment). Every run runs when an
# earlier one fails; exits with the first failed run's status.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CLUSTER=$ROOT/bin/cluster
STARTED_CLUSTER=false

log() { echo "e2e: $*"; }

# stop_started_cluster: the EXIT trap; only a cluster this script started is
# stopped, and never one the user asked to keep.
stop_started_cluster() {
  [[ $STARTED_CLUSTER == true ]] || return 0
  if [[ ${RUDDER_KEEP_CLUSTER:-} == 1 ]]; then
    log "RUDDER_KEEP_CLUSTER=1: leaving the cluster running ('make cluster-down' stops it)"
    log "export KUBECONFIG=$CLUSTER/kubeconfig"
    return 0
  fi
  "$ROOT/hack/cluster-down.sh" || log "WARNING: cluster-down failed"
}

ensure_cluster() {
  if "$ROOT/hack/cluster-up.sh" --check; then
    log "using the running cluster in $CLUSTER (it stays running)"
    return
  fi
  # Set before starting, so that a half-started cluster is cleaned up as well.
  STARTED_CLUSTER=true
  "$ROOT/hack/cluster-up.sh"
}

# show_failures FILE: for each test that failed in the go test -v output FILE,
# the last 30 lines it logged (first lines only): its failure message among
# them. Printed last, so that a CI log cut to its tail still says why.
show_failures() {
  awk '
    /^=== (RUN|CONT|NAME|PAUSE) / { test = $3; next }
    /^[[:space:]]*--- FAIL: / { if (!($3 in failed)) order[++nfailed] = $3; failed[$3] = 1; next }
    /^    [^ ].*\.go:[0-9]+: / { n[test]++; logged[test, n[test]] = $0 }
    END {
      for (f = 1; f <= nfailed; f++) {
        t = order[f]
        print "----- " t " failed; the last lines it logged -----"
        for (i = (n[t] > 30 ? n[t] - 29 : 1); i <= n[t]; i++) print logged[t, i]
      }
    }' "$1"
}

# show_component_logs: the last 50 lines of each control-plane log, after a
# copy of every log (those of components restarted included) is kept in a
# new directory under TMPDIR, which a cluster-down would delete with the
# cluster.
show_component_logs() {
  local file kept
  if kept=$(mktemp -d -t rudder-e2e-cluster-logs.XXXXXX) && cp -p "$CLUSTER"/logs/* "$kept"/ 2>/dev/null; then
    log "the control plane's logs are kept in $kept"
  fi
  for file in "$CLUSTER"/logs/*.log; do
    [[ -f $file ]] || continue
    echo "----- last 50 lines of $file -----"
    tail -n 50 "$file"
  done
}

# LOCKDOWN_TESTS are the acceptance tests run again in lockdown: the seed's
# WebApp and its commands and troubleshooting, a Database's life, values from
# ConfigMaps and Secrets, depends-on, helm CLI interop and rollback.
LOCKDOWN_TESTS='TestWebApp_Seed|TestSeed_Troubleshooting|TestDatabase_Lifecycle|TestValuesFrom_ConfigMapAndSecret|TestDependsOn_WebAppWaitsForItsDatabase|TestLifecycle_OutOfBandHelmDetected|TestLifecycle_RollbackHoldsAcrossRestarts'

# gotest NAME [VAR=VALUE...] -- GO TEST ARGS...: one go test run against the
# cluster, its output shown and appended to $OUTPUT; records the first failed
# run's status in STATUS.
gotest() {
  local name=$1 vars=() status=0
  shift
  while [[ $1 != -- ]]; do vars+=("$1"); shift; done
  shift
  log "$name: go test $*"
  env KUBECONFIG="$CLUSTER/kubeconfig" \
    RUDDER_MANAGER_BIN="${RUDDER_MANAGER_BIN:-$ROOT/bin/manager}" RUDDER_BASELINE_BIN="${RUDDER_BASELINE_BIN:-$ROOT/bin/baseline}" \
    "${vars[@]}" go test -count=1 -timeout "$TIMEOUT" "$@" 2>&1 | tee -a "$OUTPUT" || status=$?
  if ((status != 0)); then
    log "$name: go test failed with status $status"
    ((STATUS != 0)) || STATUS=$status
  fi
}

main() {
  TIMEOUT=${1:?usage: hack/e2e.sh TIMEOUT [GO TEST ARGS...] (e.g. 40m)}
  shift
  cd "$ROOT"
  trap stop_started_cluster EXIT
  ensure_cluster

  STATUS=0
  OUTPUT=$(mktemp -t rudder-e2e-output.XXXXXX)
  if (($# > 0)); then
    # `make bench` and a developer's own selection pass their own.
    gotest "go test" -- "$@"
  else
    # Three runs, one after another, each starting operators that watch
    # namespaces the others use. Those that mostly wait come first, as make
    # test runs the unit tests beside them: the short benchmark; the
    # acceptance tests with rudder in lockdown, every operator acting for a
    # resource as the ServiceAccount deployer of its namespace, bound to what
    # `rudder rbac` prints (test/e2e/lockdown_test.go); then the whole suite.
    # -parallel 8: the tests that never restart the manager or the cluster
    # call t.Parallel() and run together once the others are done; they
    # mostly wait on the cluster, so more of them than cores is the point.
    gotest "short benchmark" -- -tags e2e -v ./test/bench/
    gotest "acceptance tests in lockdown (--default-service-account=deployer)" RUDDER_E2E_SERVICE_ACCOUNT=deployer -- \
      -tags e2e -parallel 8 -v -run "$LOCKDOWN_TESTS" ./test/e2e/
    gotest "end-to-end suite" -- -tags e2e -parallel 8 -v ./test/e2e/
  fi

  if ((STATUS != 0)); then
    log "go test failed; control-plane logs follow"
    show_component_logs
    show_failures "$OUTPUT"
  fi
  rm -f "$OUTPUT"
  return "$STATUS"
}

main "$@"
