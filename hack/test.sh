#!/usr/bin/env bash
# make test: every test, in phases, each timed. Its summary, printed last
# (pass or fail), gives each phase's duration, each Go package's, and the
# slowest end-to-end tests, so that a slower run shows in its own log.
#
# Usage: hack/test.sh
#
# Phases, in order: setup (hack/packages.sh, then the tools make test-e2e
# needs: make tools-test build baseline), unit (make test-unit), fuzz (make
# test-fuzz), e2e (make test-e2e). A failed setup stops the run: nothing could
# pass without it. A failed test phase does not: the later phases still run,
# so that one run shows every failure. Exits non-zero when any phase failed.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

LOG=$(mktemp -t rudder-test-output.XXXXXX)
STARTED=$SECONDS
declare -a PHASES=()
FAILED=()

# phase NAME COMMAND...: run COMMAND with its output kept for the summary, and
# record how long it took.
phase() {
  local name=$1 start=$SECONDS status=0
  shift
  echo "test: phase $name: $*"
  "$@" 2>&1 | tee -a "$LOG" || status=$?
  PHASES+=("$(printf '%-6s %5ds  %s' "$name" $((SECONDS - start)) "$([[ $status == 0 ]] && echo ok || echo "FAILED (exit $status)")")")
  ((status == 0)) || FAILED+=("$name")
  return "$status"
}

# summary: the phases, the Go packages by duration (go test's "ok" and "FAIL"
# lines), and the ten slowest top-level end-to-end tests.
summary() {
  local total=$((SECONDS - STARTED))
  echo
  echo "test: summary ($((total / 60))m$((total % 60))s in all)"
  printf '  %s\n' "${PHASES[@]}"
  echo "test: Go packages, slowest first"
  awk '$1 == "ok" || $1 == "FAIL" { if ($3 ~ /^[0-9.]+s$/) { d = $3; sub(/s$/, "", d); printf "  %8.1fs  %-4s %s\n", d, $1, $2 } }' "$LOG" |
    sort -rn | head -n 25
  echo "test: slowest end-to-end tests"
  awk '/^--- (PASS|FAIL): Test[^ ]* \([0-9.]+s\)$/ { d = $4; gsub(/[()s]/, "", d); printf "  %8.1fs  %s %s\n", d, $2, $3 }' "$LOG" |
    sort -rn | head -n 10
}

main() {
  trap 'summary; rm -f "$LOG"' EXIT
  phase setup bash -c 'hack/packages.sh ensure && make --no-print-directory tools-test build baseline' || exit 1
  phase unit make --no-print-directory test-unit || true
  phase fuzz make --no-print-directory test-fuzz || true
  phase e2e make --no-print-directory test-e2e || true
  if ((${#FAILED[@]} > 0)); then
    echo "test: FAILED: ${FAILED[*]}"
    exit 1
  fi
  echo "test: every phase passed"
}

main "$@"
