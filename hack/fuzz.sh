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
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
FUZZTIME=${FUZZTIME:-10s}
FUZZMINIMIZETIME=${FUZZMINIMIZETIME:-5s}
cd "$ROOT"

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

for target in "${targets[@]}"; do
  read -r dir name <<<"$target"
  echo "fuzz: $name ($dir) for $FUZZTIME"
  go test -run '^$' -fuzz "^${name}\$" -fuzztime "$FUZZTIME" -fuzzminimizetime "$FUZZMINIMIZETIME" "$@" "$dir"
done
echo "fuzz: ${#targets[@]} targets passed"
