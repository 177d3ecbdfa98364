#!/usr/bin/env bash
# Checks rudder's module for known vulnerabilities in the code it calls:
# govulncheck ./... at symbol level, against bin/vulndb, the Go vulnerability
# database that hack/tools.sh builds from the golang.org/x/vulndb version it
# pins (no network beyond the Go module proxy). A vulnerable module or standard
# library package that rudder imports but whose vulnerable functions it never
# calls is not a finding.
#
# Exits 0 when nothing is found, 1 otherwise; a finding names the module (or
# the Go toolchain, for the standard library) and the version that fixes it.
# make vulncheck runs it, and make lint as its last step.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BIN=${RUDDER_TOOLS_BIN:-$ROOT/bin} # as hack/tools.sh
cd "$ROOT"

"$ROOT/hack/tools.sh" govulncheck vulndb

status=0
"$BIN/govulncheck" -db "file://$BIN/vulndb" ./... || status=$?
case $status in
  0) ;;
  3)
    echo "vulncheck: rudder calls code with the vulnerabilities above: raise each module to the version" \
      "'Fixed in' names (go get MODULE@VERSION), or Go itself for the standard library" >&2
    exit 1 ;;
  *)
    echo "vulncheck: govulncheck could not check the module (exit $status, above)" >&2
    exit 1 ;;
esac
