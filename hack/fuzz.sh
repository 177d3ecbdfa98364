#!/usr/bin/env bash
# Runs every Go fuzz target of the module (each func FuzzXxx(f *testing.F) in a
# _test.go file), one after another, each for FUZZTIME:
#   go test -run '^$' -fuzz '^FuzzXxx$' -fuzztime FUZZTIME \
#     -fuzzminimizetime FUZZMINIMIZETIME [ARGS...] ./pkg
#
# Usage: hack/fuzz.sh [GO TEST ARGS...]    e.g. FUZZTIME=60s hack/fuzz.sh -parallel 1
#
# FUZZTIME is a Go duration or a count such as 1000x (default 10s).
# FUZZMINIMIZETIME (default 5s) bounds the time spent shrinking each new input:
# go test's 60s would spend a short run shrinking one mutation of a large seed
# (a chart's values.schema.json) instead of fuzzing. `go test
# ./...` runs the seed corpus of every target already (f.Add and
# testdata/fuzz/); this explores beyond it. An input that fails is written to
# the package's testdata/fuzz/FuzzXxx/, where every later `go test` runs it:
# fix the cause and keep the file. Stops at the first target that fails.
#
# Before it fuzzes, go test replays the target's cached corpus (the inputs
# earlier runs found interesting, in $GOCACHE/fuzz/<package>/<target>, which
# grows with every run) and fails with "context deadline exceeded" when that
# replay outlasts FUZZTIME. So the cache keeps the newest FUZZ_CACHE_KEEP
# inputs of each target (default 20; the seeds in f.Add and testdata/fuzz are
# never touched): a short run then fuzzes instead of replaying.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
FUZZTIME=${FUZZTIME:-10s}
FUZZMINIMIZETIME=${FUZZMINIMIZETIME:-5s}
FUZZ_CACHE_KEEP=${FUZZ_CACHE_KEEP:-20}
cd "$ROOT"
FUZZ_CACHE=$(go env GOCACHE)/fuzz

# prune_cache DIR NAME: keep the newest FUZZ_CACHE_KEEP cached inputs of target
# NAME of the package in DIR.
prune_cache() {
  local d
  d="$FUZZ_CACHE/$(go list "$1")/$2"
  [[ -d $d ]] || return 0
  find "$d" -maxdepth 1 -type f -printf '%T@ %p\n' | sort -rn | tail -n +$((FUZZ_CACHE_KEEP + 1)) |
    cut -d' ' -f2- | xargs -r -d '\n' rm -f
}

# Each target as "<package dir> <function>", from the test files outside bin/,
# hack/tools/ and testdata/.
mapfile -t targets < <(
  find . \( -path ./.git -o -path ./bin -o -path ./hack/tools -o -name testdata \) -prune \
    -o -type f -name '*_test.go' -print0 |
    xargs -0 --no-run-if-empty grep -H -o '^func Fuzz[A-Za-z0-9_]*(f \*testing\.F)' |
    sed -E 's#^(.*)/[^/]+_test\.go:func (Fuzz[A-Za-z0-9_]*)\(.*#\1 \2#' |
    sort
)
((${#targets[@]} > 0)) || { echo "fuzz: no fuzz targets found" >&2; exit 1; }

out=$(mktemp)
trap 'rm -f "$out"' EXIT

for target in "${targets[@]}"; do
  read -r dir name <<<"$target"
  for attempt in 1 2; do
    echo "fuzz: $name ($dir) for $FUZZTIME"
    prune_cache "$dir" "$name"
    if go test -run '^$' -fuzz "^${name}\$" -fuzztime "$FUZZTIME" -fuzzminimizetime "$FUZZMINIMIZETIME" "$@" "$dir" 2>&1 | tee "$out"; then
      break
    fi
    # Go 1.26's fuzzing coordinator can fail a target just as a -fuzztime
    # duration ends, with "context deadline exceeded" and no failing input:
    # its deadline races the workers' (go.dev/issue/75804, fixed in Go 1.27).
    # Such a run found nothing and is run once more; a failing input never is.
    if ((attempt == 1)) && grep -q 'context deadline exceeded' "$out" && ! grep -q 'Failing input written' "$out"; then
      echo "fuzz: $name: the fuzzing coordinator's own deadline failed it, with no failing input (go.dev/issue/75804): once more"
      continue
    fi
    exit 1
  done
done
echo "fuzz: ${#targets[@]} targets passed"
