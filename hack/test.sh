#!/usr/bin/env bash
# make test: every test, in phases, each timed. Its summary, printed last
# (pass or fail), gives each phase's duration, each Go package's, and the
# slowest end-to-end tests, so that a slower run shows in its own log.
#
# Usage: hack/test.sh
#
# setup runs first (hack/packages.sh, then the tools the tests need: make
# tools-test build baseline); a failed setup stops the run, since nothing could
# pass without it. Then two lanes run side by side, because each leaves the
# other's cores idle much of the time:
#   unit, then nocache, then fuzz (make test-unit, make test-nocache, make
#     test-fuzz): envtest's API servers, the reconciler's integration suite
#     again with every cache of rudder's own off, and the fuzzers, busy from
#     start to end;
#   e2e (make test-e2e): one local cluster, whose tests mostly wait on it.
# Each line a lane prints is prefixed with its phase's name. A failed phase
# does not stop the others, so that one run shows every failure; the summary
# repeats each failure. Exits non-zero when any phase failed.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

WORK=$(mktemp -d -t rudder-test.XXXXXX)
STARTED=$SECONDS

# phase NAME COMMAND...: run COMMAND, its output shown prefixed with NAME and
# kept in $WORK/NAME.log; its duration and result go to $WORK/NAME.result.
phase() {
  local name=$1 start=$SECONDS status=0
  shift
  echo "$name| test: phase $name: $*"
  "$@" 2>&1 | tee "$WORK/$name.log" | sed -u "s/^/$name| /" || status=$?
  printf '%-6s %5ds  %s\n' "$name" $((SECONDS - start)) "$( ((status == 0)) && echo ok || echo "FAILED (exit $status)")" >"$WORK/$name.result"
  return "$status"
}

# FAILED_LINE matches what a failure prints: a failed test, a panic, a
# package that failed without a failed test (a timeout, a build error), a
# failed make target.
FAILED_LINE='^\s*--- FAIL|^panic:|^FAIL\s|^make(\[[0-9]+\])?: \*\*\*'

# summary: the phases, the Go packages by duration (go test's "ok" and "FAIL"
# lines), the ten slowest top-level end-to-end tests, the lines around each
# failure, and last the failed tests' names.
summary() {
  # A summary never fails the run: a grep that finds nothing is not an error.
  set +e
  local total=$((SECONDS - STARTED)) name
  echo
  echo "test: summary ($((total / 60))m$((total % 60))s in all)"
  for name in setup unit nocache fuzz e2e; do
    [[ -f $WORK/$name.result ]] && sed 's/^/  /' "$WORK/$name.result"
  done
  echo "test: Go packages, slowest first"
  cat "$WORK"/*.log 2>/dev/null |
    awk '$1 == "ok" || $1 == "FAIL" { if ($3 ~ /^[0-9.]+s$/) { d = $3; sub(/s$/, "", d); printf "  %8.1fs  %-4s %s\n", d, $1, $2 } }' |
    sort -rn | head -n 25
  echo "test: slowest end-to-end tests"
  awk '/^--- (PASS|FAIL): Test[^ ]* \([0-9.]+s\)$/ { d = $4; gsub(/[()s]/, "", d); printf "  %8.1fs  %s %s\n", d, $2, $3 }' "$WORK/e2e.log" 2>/dev/null |
    sort -rn | head -n 10
  for name in setup unit nocache fuzz e2e; do
    if ! grep -qE -- "$FAILED_LINE" "$WORK/$name.log" 2>/dev/null; then continue; fi
    echo "test: what failed in $name"
    grep -E -B 5 -A 15 -- "$FAILED_LINE" "$WORK/$name.log" | head -n 300
  done
  # Last, since a CI log may show only its tail: the failed tests by name.
  for name in unit nocache fuzz e2e; do
    local tests
    tests=$(grep -oE -- '--- FAIL: [^ ]+' "$WORK/$name.log" 2>/dev/null | awk '{ print $3 }' | sort -u | tr '\n' ' ' || true)
    [[ -n $tests ]] && echo "test: failed in $name: $tests"
  done
  return 0
}

main() {
  trap 'summary; rm -rf "$WORK"' EXIT
  phase setup bash -c 'hack/packages.sh ensure && make --no-print-directory tools-test build baseline' || exit 1
  (
    phase unit make --no-print-directory test-unit || true
    phase nocache make --no-print-directory test-nocache || true
    phase fuzz make --no-print-directory test-fuzz || true
  ) &
  local lane=$!
  phase e2e make --no-print-directory test-e2e || true
  wait "$lane"
  local failed
  failed=$(cat "$WORK"/*.result | awk '$3 != "ok" { printf "%s ", $1 }')
  if [[ -n $failed ]]; then
    echo "test: FAILED: $failed"
    exit 1
  fi
  echo "test: every phase passed"
}

main "$@"
