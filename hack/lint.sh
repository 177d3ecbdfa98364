#!/usr/bin/env bash
# Lint everything `make lint` checks, stopping at the first step that fails:
#   1. gofmt      every Go file of the module is gofmt-clean
#   2. go vet     ./...
#   3. golangci   bin/golangci-lint run ./... with .golangci.yml
#   4. helm lint  --strict, for every chart under charts/ with each of its ci/*.yaml values files, or
#                 its defaults when it has none (the chart-testing convention)
#   5. chart gate every chart of watches.yaml renders (helm template) with its ci/*.yaml (or defaults) and
#                 the spec of each sample of config/samples of its kind; every sample passes its CRD's
#                 validation and renders into objects the API server accepts (server-side dry run on envtest):
#                 go test ./test/kinds -run '^TestCharts_'
#   6. govulncheck hack/vulncheck.sh: bin/govulncheck -db file://bin/vulndb ./... fails when rudder's code
#                 calls a function with a known vulnerability
# Tools come from bin/; hack/tools.sh builds each one that is missing or at another version.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BIN="${ROOT}/bin"
cd "${ROOT}"

step=0
header() {
	step=$((step + 1))
	printf '\n==> [%d/6] %s\n' "${step}" "$*"
}

fail() {
	printf 'lint: FAILED: %s\n' "$*" >&2
	exit 1
}

# need TOOL: make sure bin/TOOL is built at its pinned version (hack/tools.sh
# skips it when it is).
need() {
	local tool="$1"
	"${ROOT}/hack/tools.sh" "${tool}" || fail "hack/tools.sh failed while building bin/${tool}"
}

# 1. gofmt. bin/ and hack/tools/ hold other modules' sources and build outputs;
# testdata/ is ignored by the go tool and may hold deliberately broken Go.
header "gofmt"
unformatted="$(
	find . \( -path ./.git -o -path ./bin -o -path ./hack/tools -o -name testdata \) -prune \
		-o -type f -name '*.go' -print0 |
		xargs -0 --no-run-if-empty gofmt -l
)" || fail "gofmt could not parse the Go files reported above"
if [[ -n "${unformatted}" ]]; then
	mapfile -t files <<<"${unformatted}"
	printf '  %s\n' "${files[@]}" >&2
	fail "gofmt: ${#files[@]} file(s) above are not gofmt-formatted (fix with: gofmt -w <file>)"
fi
echo "ok"

# 2. go vet, also of the end-to-end tests and the benchmark, which only build
# with their tags: without these, they would rot unseen until a cluster run.
header "go vet ./... and, with -tags e2e,bench, ./test/..."
go vet ./... || fail "go vet reported problems (above)"
go vet -tags e2e,bench ./test/... || fail "go vet -tags e2e,bench reported problems (above)"
(cd test/monitoring && go vet ./...) || fail "go vet in test/monitoring (its own module) reported problems (above)"
echo "ok"

# 3. golangci-lint, configured by .golangci.yml at the module root; the e2e and
# bench code with their build tags as well.
header "golangci-lint run ./... (and --build-tags e2e,bench ./test/...)"
need golangci-lint
"${BIN}/golangci-lint" run ./... || fail "golangci-lint reported problems (above)"
"${BIN}/golangci-lint" run --build-tags e2e,bench ./test/... || fail "golangci-lint --build-tags e2e,bench reported problems (above)"
(cd test/monitoring && "${BIN}/golangci-lint" run -c ../../.golangci.yml ./...) ||
	fail "golangci-lint in test/monitoring (its own module) reported problems (above)"
echo "ok"

# 4. helm lint --strict on every chart, once per values file under its ci/
# directory, or once with its defaults when it has none (the chart-testing
# convention: a chart whose values.yaml leaves a required value to the user,
# such as a WebApp's image, lints with the values its ci/ gives).
header "helm lint --strict charts/*"
need helm
shopt -s nullglob
charts=0
for chart_yaml in charts/*/Chart.yaml; do
	chart="$(dirname "${chart_yaml}")"
	charts=$((charts + 1))
	ci_values=("${chart}"/ci/*.yaml)
	if ((${#ci_values[@]} == 0)); then
		echo "--- ${chart}"
		"${BIN}/helm" lint --strict "${chart}" || fail "helm lint --strict ${chart}"
	fi
	for values in "${ci_values[@]}"; do
		echo "--- ${chart} -f ${values}"
		"${BIN}/helm" lint --strict -f "${values}" "${chart}" ||
			fail "helm lint --strict -f ${values} ${chart}"
	done
done
((charts > 0)) || fail "no charts found under charts/*/Chart.yaml"
echo "ok (${charts} chart(s))"

# 5. The chart gate: a Go test against a real kube-apiserver (envtest) with the
# CRDs of config/crd/bases, so that `make test` runs it too. It names the
# sample, the chart and the error of each problem.
header "chart gate: render every chart with its ci/ values (or defaults) and the samples; validate the samples"
need etcd
need kube-apiserver
KUBEBUILDER_ASSETS="${BIN}" go test -count=1 -run '^TestCharts_' ./test/kinds/ ||
	fail "chart gate: a chart does not render or a sample of config/samples fails (above)"
echo "ok"

# 6. govulncheck, last: it is the slowest step, and what it finds comes from
# outside rudder's code (the advisories of the pinned vulndb, the Go in use), so
# the checks above report first.
header "govulncheck ./... against bin/vulndb (hack/vulncheck.sh)"
"${ROOT}/hack/vulncheck.sh" || fail "govulncheck: rudder calls vulnerable code, or could not be checked (above)"
echo "ok"

printf '\nlint: all checks passed\n'
