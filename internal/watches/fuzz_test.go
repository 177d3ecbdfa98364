package watches

import (
	"errors"
	"fmt"
	"os"
	"path"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"unicode"

	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"
)

// fuzzCharts is a file system for FuzzLoad: a minimal chart at each chart path the seeds use.
func fuzzCharts() fstest.MapFS {
	fsys := fstest.MapFS{}
	for _, dir := range []string{"charts/app", "charts/webapp", "charts/network", "charts/database", "helm-charts/nginx", "helm-charts/webapp"} {
		fsys[dir+"/Chart.yaml"] = &fstest.MapFile{Data: []byte("apiVersion: v2\nname: " + path.Base(dir) + "\nversion: 0.1.0\n")}
		fsys[dir+"/templates/configmap.yaml"] = &fstest.MapFile{Data: []byte("apiVersion: v1\nkind: ConfigMap\n")}
	}
	return fsys
}

// riskyTemplate says whether s calls a template function or action whose output is not a function of its text
// alone (random, time, network, the environment outside $ENV expansion), or whose cost grows with a number in
// the text (repeat 1e9, range 1e9, an indent or printf width): the fuzz targets skip such inputs, so that they
// stay deterministic and cannot exhaust the machine's memory. Authors of watches files are trusted with those.
func riskyTemplate(s string) bool {
	for _, word := range []string{
		"rand", "uuid", "shuffle", "now", "ago", "date", "Date", "unixEpoch", "gen", "Cert", "bcrypt", "htpasswd",
		"encrypt", "derivePassword", "getHostByName", "env", "repeat", "until", "seq", "range", "indent", "printf",
		"define", "block", "template", "wrap", "abbrev", "trunc",
	} {
		if strings.Contains(s, word) {
			return true
		}
	}
	return false
}

// knownFields are the fields of an entry, as spelled in a watches file.
var knownFields = slices.Sorted(func(yield func(string) bool) {
	for k := range (&fields{}).targets() {
		if !yield(k) {
			return
		}
	}
})

// FuzzLoad feeds arbitrary watches files to Load. A file either loads into valid, unique watches with their
// defaults filled in, or gives errors that each name the file, and the entry and field at fault, or say what
// is wrong with the file as a whole. Loading twice gives the same answer.
func FuzzLoad(f *testing.F) {
	for _, name := range []string{"../../watches.yaml", "testdata/operator-sdk/watches.yaml", "testdata/rudder/watches.yaml"} {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	const entry = "- group: webapp.my.domain\n  version: v1\n  kind: WebApp\n  chart: charts/app\n"
	for _, seed := range []string{
		"",
		"[]",
		"{}",
		"- WebApp\n",
		entry,
		entry + entry,
		entry + strings.ReplaceAll(entry, "WebApp", "webapp"),
		entry + "  overrideValues:\n    image.tag: $RUDDER_FUZZ_TAG\n    name: '{{ \"x\" | upper }}'\n    n: 3\n",
		entry + "  overrideValues:\n    bad: '{{ .Missing.Field }}'\n    unclosed: '{{'\n",
		entry + "  reconcilePeriod: 5s\n  maxConcurrentReconciles: 2\n  maxHistory: 0\n",
		entry + "  reconcilePeriod: -1s\n  selector:\n    matchLabels: {app: x}\n    matchExpressions:\n      - {key: tier, operator: In, values: [a]}\n",
		entry + "  selector:\n    matchExpressions:\n      - {key: tier, operator: Near}\n",
		entry + "  hooks: [password, '', password]\n",
		entry + "  remediation:\n    strategy: rollback\n    maxAttempts: 2\n    readinessTimeout: 90s\n    installFailure: uninstall\n  outOfBand: keep\n",
		entry + "  remediation: {strategy: Retry, maxAttempts: -1, readinessTimeout: x, extra: 1}\n",
		entry + "  chartVersion: 1.0.0\n  MaxHistory: 3\n  watchDependentResources: yes\n",
		"- group: Web_App\n  version: 1\n  kind: web-app\n  chart: /abs\n- group: a.b\n  version: v1\n  kind: A\n  chart: ../../up\n",
		"- group: a.b\n  version: v1beta2\n  kind: A\n  chart: charts/missing\n  hooks: {a: b}\n  overrideValues: [x]\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if riskyTemplate(string(data)) {
			t.Skip("calls a template function that is random, reads the clock or the host, or costs as much as a number it is given: not deterministic or bounded, see riskyTemplate")
		}
		fsys := fuzzCharts()
		fsys["watches.yaml"] = &fstest.MapFile{Data: data}
		got, err := Load(fsys, "watches.yaml")
		again, errAgain := Load(fsys, "watches.yaml")
		if describeLoad(got, err) != describeLoad(again, errAgain) {
			t.Fatalf("Load is not deterministic:\n%s\n%s", describeLoad(got, err), describeLoad(again, errAgain))
		}
		if err != nil {
			if got != nil {
				t.Fatalf("Load returned watches %v and the error %v", got, err)
			}
			checkLoadError(t, data, err)
			return
		}
		checkWatches(t, got)
	})
}

// describeLoad is what Load returned, as text to compare.
func describeLoad(ws []Watch, err error) string {
	if err != nil {
		return "error: " + err.Error()
	}
	var b strings.Builder
	for _, w := range ws {
		fmt.Fprintf(&b, "%v %q %q %v %v %v %d %q %q %d %+v %q\n", w.GVK, w.Chart, w.ChartDir, w.WatchDependentResources,
			w.OverrideValues, w.ReconcilePeriod, w.MaxConcurrentReconciles, w.Selector, w.Hooks, w.MaxHistory,
			w.Remediation, w.OutOfBand)
	}
	return b.String()
}

// checkLoadError checks that every error Load joined names the file and, for an entry, the entry and a field.
func checkLoadError(t *testing.T, data []byte, err error) {
	t.Helper()
	var entries []any
	_ = yaml.Unmarshal(data, &entries) // how many entries there are, when the file is a list
	var leaves []error
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		leaves = joined.Unwrap()
	} else {
		leaves = []error{err}
	}
	for _, leaf := range leaves {
		var ee *EntryError
		if !errors.As(leaf, &ee) {
			if !strings.HasPrefix(leaf.Error(), "watches.yaml: ") {
				t.Errorf("error %q about the whole file does not begin with the file's name", leaf)
			}
			continue
		}
		if ee.File != "watches.yaml" || ee.Entry < 1 || ee.Entry > len(entries) || ee.Problem == "" {
			t.Errorf("EntryError %+v: want file watches.yaml, an entry of 1 to %d and a problem", ee, len(entries))
		}
		if prefix := fmt.Sprintf("watches.yaml entry %d (", ee.Entry); !strings.HasPrefix(ee.Error(), prefix) {
			t.Errorf("error %q does not begin with %q", ee, prefix)
		}
		if ee.Field == "" {
			continue
		}
		if !strings.Contains(ee.Error(), fmt.Sprintf("field %q", ee.Field)) {
			t.Errorf("error %q does not name its field %q", ee, ee.Field)
		}
		root, _, _ := strings.Cut(strings.SplitN(ee.Field, "[", 2)[0], ".")
		if !slices.Contains(knownFields, root) && !strings.HasPrefix(ee.Problem, "unknown field") {
			t.Errorf("error %q names field %q, neither a field of an entry (%s) nor reported unknown", ee, ee.Field,
				strings.Join(knownFields, ", "))
		}
	}
}

// checkWatches checks what Load promises of the watches it returns.
func checkWatches(t *testing.T, ws []Watch) {
	t.Helper()
	if len(ws) == 0 {
		t.Fatal("Load returned no watches and no error")
	}
	kinds := map[string]bool{}
	for i, w := range ws {
		g := w.GVK
		switch {
		case len(validation.IsDNS1123Subdomain(g.Group)) > 0 || !strings.Contains(g.Group, "."):
			t.Errorf("watch %d: group %q is not a domain name", i, g.Group)
		case !versionPattern.MatchString(g.Version):
			t.Errorf("watch %d: version %q is not a Kubernetes API version", i, g.Version)
		case !kindPattern.MatchString(g.Kind):
			t.Errorf("watch %d: kind %q is not UpperCamelCase", i, g.Kind)
		case kinds[strings.ToLower(g.Kind)]:
			t.Errorf("watch %d: kind %q is served twice", i, g.Kind)
		}
		kinds[strings.ToLower(g.Kind)] = true
		if w.MaxHistory < 1 || w.MaxConcurrentReconciles < 1 || w.ReconcilePeriod < 0 || w.Remediation.MaxAttempts < 1 ||
			w.Remediation.ReadinessTimeout < 0 {
			t.Errorf("watch %d: a count below 1 or a negative duration: %s", i, describeLoad(ws[i:i+1], nil))
		}
		if !slices.Contains([]Strategy{StrategyRetry, StrategyRollback}, w.Remediation.Strategy) ||
			!slices.Contains([]InstallFailure{InstallFailureKeep, InstallFailureUninstall}, w.Remediation.InstallFailure) ||
			!slices.Contains([]OutOfBand{OutOfBandRevert, OutOfBandKeep}, w.OutOfBand) {
			t.Errorf("watch %d: a word outside its set: %s", i, describeLoad(ws[i:i+1], nil))
		}
		if w.Selector == nil || w.ChartFS == nil || w.ChartDir == "" {
			t.Errorf("watch %d: no selector or chart: %s", i, describeLoad(ws[i:i+1], nil))
		}
		seen := map[string]bool{}
		for _, h := range w.Hooks {
			if h == "" || seen[h] {
				t.Errorf("watch %d: hooks %q are not non-empty and unique", i, w.Hooks)
			}
			seen[h] = true
		}
		if _, err := w.LoadChart(); err != nil {
			t.Errorf("watch %d: its chart was checked but does not load: %v", i, err)
		}
	}
}

// fuzzSecret is the value of the environment variable RUDDER_FUZZ_SECRET in FuzzExpandValue: a password-like
// value with punctuation, which a template may split into tokens.
const fuzzSecret = "pA55-w0rd.Zq7!x"

// FuzzExpandValue feeds arbitrary override values to the $ENV expansion and template rendering of
// overrideValues. The same value always expands to the same text or the same error; text without "$" or "{{"
// is left as it is; and no error message shows a value read from the environment, nor a part of one.
func FuzzExpandValue(f *testing.F) {
	f.Setenv("RUDDER_FUZZ_SECRET", fuzzSecret)
	f.Setenv("RUDDER_FUZZ_TAG", "v2")
	f.Setenv("RUDDER_FUZZ_EMPTY", "")
	for _, seed := range [][2]string{
		{"image.tag", "plain"},
		{"image.tag", "$RUDDER_FUZZ_TAG"},
		{"image.tag", "${RUDDER_FUZZ_TAG}-debug"},
		{"password", "$RUDDER_FUZZ_SECRET"},
		{"password", "{{ $RUDDER_FUZZ_SECRET }}"},
		{"password", "{{ \"$RUDDER_FUZZ_SECRET\" | fail }}"},
		{"password", "{{ .$RUDDER_FUZZ_SECRET }}"},
		{"password", "{{ $RUDDER_FUZZ_SECRET | upper }}"},
		{"password", "${RUDDER_FUZZ_SECRET}{{"},
		{"empty", "$RUDDER_FUZZ_EMPTY{{ \"x\" | default \"y\" }}"},
		{"unset", "$RUDDER_FUZZ_UNSET"},
		{"dollar", "$$ $ ${ ${} $1"},
		{"upper", "{{ \"latest\" | upper }}"},
		{"json", "{{ dict \"a\" 1 | toJson }}"},
		{"missing", "{{ .Missing.Field }}"},
		{"unclosed", "{{"},
		{"fail", "{{ fail \"no\" }}"},
		{"sprig", "{{ list 1 2 3 | last }}-{{ \"a,b\" | splitList \",\" | join \"+\" }}-{{ sha256sum \"x\" | substr 0 8 }}"},
		{"", "{{ 1 | add 2 }}"},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, key, value string) {
		if riskyTemplate(key + value) {
			t.Skip("calls a template function that is random, reads the clock or the host, or costs as much as a number it is given: not deterministic or bounded, see riskyTemplate")
		}
		got, err := expandValue(key, value)
		again, errAgain := expandValue(key, value)
		if got != again || fmt.Sprint(err) != fmt.Sprint(errAgain) {
			t.Fatalf("expandValue(%q, %q) is not deterministic: %q, %v; then %q, %v", key, value, got, err, again, errAgain)
		}
		if !strings.ContainsAny(value, "${") && (err != nil || got != value) {
			t.Errorf("expandValue(%q, %q) = %q, %v; want the text as it is", key, value, got, err)
		}
		if err == nil {
			return
		}
		for _, part := range secretParts(fuzzSecret) {
			if strings.Contains(err.Error(), part) && !strings.Contains(key+value, part) {
				t.Errorf("expandValue(%q, %q): error %q shows %q, a part of the value of $RUDDER_FUZZ_SECRET",
					key, value, err, part)
			}
		}
	})
}

// secretParts are the parts of a secret that must not show: the whole, and each run of three or more letters
// and digits.
func secretParts(secret string) []string {
	parts := []string{secret}
	for _, word := range strings.FieldsFunc(secret, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if len(word) >= 3 {
			parts = append(parts, word)
		}
	}
	return parts
}
