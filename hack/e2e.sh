#!/usr/bin/env bash
# Runs the end-to-end tests and the short benchmark (go test -tags e2e -p 1
# ./test/e2e/... ./test/bench/, then the acceptance tests again with rudder in
# lockdown; or only the go test arguments given after TIMEOUT) against the
# local cluster of hack/cluster-up.sh.
#
# Usage: hack/e2e.sh TIMEOUT        e.g. hack/e2e.sh 40m
#
# A cluster that is already running is used and left running. A cluster this
# script starts is stopped when it ends, pass or fail, unless
# RUDDER_KEEP_CLUSTER=1. The tests find the cluster through KUBECONFIG and the
# operator binaries through RUDDER_MANAGER_BIN and RUDDER_BASELINE_BIN (the
# benchmark's baseline), bin/manager and bin/baseline unless set (a wrapper
# script can run the manager with another environment). Exits with go test's
# status.
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

main() {
  local timeout=${1:?usage: hack/e2e.sh TIMEOUT [GO TEST ARGS...] (e.g. 40m)}
  shift
  # Without arguments: the end-to-end suite, then the short benchmark. -p 1:
  # one package at a time, as both start operators that watch every namespace.
  # -parallel 8: the tests that never restart the manager or the cluster call
  # t.Parallel() and run together once the others are done; they mostly wait
  # on the cluster, so more of them than cores is the point.
  # `make bench` passes its own.
  local args=("$@") lockdown_pass=false
  if ((${#args[@]} == 0)); then
    args=(-tags e2e -p 1 -parallel 8 -v ./test/e2e/... ./test/bench/)
    lockdown_pass=true
  fi
  cd "$ROOT"


  trap stop_started_cluster EXIT
  ensure_cluster

  local status=0 output
  output=$(mktemp -t rudder-e2e-output.XXXXXX)
  KUBECONFIG=$CLUSTER/kubeconfig RUDDER_MANAGER_BIN=${RUDDER_MANAGER_BIN:-$ROOT/bin/manager} RUDDER_BASELINE_BIN=${RUDDER_BASELINE_BIN:-$ROOT/bin/baseline} \
    go test -count=1 -timeout "$timeout" "${args[@]}" 2>&1 | tee "$output" || status=$?

  # The acceptance tests once more, with rudder in lockdown: every operator
  # acts for a resource as the ServiceAccount deployer of its namespace,
  # bound to what `rudder rbac` prints (test/e2e/lockdown_test.go).
  if ((status == 0)) && [[ $lockdown_pass == true ]]; then
    log "the acceptance tests again, rudder in lockdown (--default-service-account=deployer)"
    RUDDER_E2E_SERVICE_ACCOUNT=deployer KUBECONFIG=$CLUSTER/kubeconfig \
      RUDDER_MANAGER_BIN=${RUDDER_MANAGER_BIN:-$ROOT/bin/manager} RUDDER_BASELINE_BIN=${RUDDER_BASELINE_BIN:-$ROOT/bin/baseline} \
      go test -count=1 -timeout "$timeout" -tags e2e -p 1 -parallel 8 -v -run "$LOCKDOWN_TESTS" ./test/e2e/ 2>&1 | tee "$output" || status=$?
  fi

  if ((status != 0)); then
    log "go test failed with status $status; control-plane logs follow"
    show_component_logs
    show_failures "$output"
  fi
  rm -f "$output"
  return "$status"
}

main "$@"
