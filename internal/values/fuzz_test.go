package values

import (
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// plainWord is an override key naming one top-level value, or an override value strvals keeps as a string.
var plainWord = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9]*$`)

// FuzzFor merges arbitrary specs (JSON, decoded as the API machinery decodes a custom resource) with one or two
// arbitrary override values, as a watch's overrideValues are after $ENV expansion (FuzzExpandValue in
// internal/watches fuzzes that). For must be deterministic, leave the custom resource and the overrides as they
// were, name the override at fault in an error, keep every value of the spec no override names, apply a plain
// override as written, and give values whose digest survives the JSON round trip of Helm's release storage.
func FuzzFor(f *testing.F) {
	for _, seed := range []struct {
		spec, k1, v1, k2, v2 string
	}{
		{`{"image":{"repo":"nginx","tag":"1.25"}}`, "image.repo", "mirror/nginx", "", ""},
		{`{"image":"nginx","port":80}`, "port", "8080", "replicas", "3"},
		{`{}`, "a.b", "1", "a.c", "true"},
		{`{"list":[1,2,3]}`, "list[1]", "x", "list[5]", "null"},
		{`{"config":{"A":"1"}}`, "config.A", "2", "config\\.A", "3"},
		{`{"a":{"b":1}}`, "a", "scalar", "a.b.c", "deep"},
		{`{"x":1,"y":2}`, "x", "1,y=3", "", ""},
		{`[1,2]`, "a", "b", "", ""},
		{`null`, "a", "", "", ""},
		{`{"a":1.5,"b":-0,"c":1e300,"d":"\u00e9"}`, "e", "{a,b}", "f", "\"quoted\""},
		{`{}`, "a[", "x", "", ""},
		{`{}`, "", "x", "=", "y"},
	} {
		f.Add([]byte(seed.spec), seed.k1, seed.v1, seed.k2, seed.v2)
	}
	f.Fuzz(func(t *testing.T, spec []byte, k1, v1, k2, v2 string) {
		// overrideValues come from YAML, which is UTF-8: an invalid byte
		// in a key would read as U+FFFD, as in the JSON of the spec, and
		// name keys it does not spell (found by a 10-minute run).
		if !utf8.ValidString(k1) || !utf8.ValidString(k2) || !utf8.Valid(spec) {
			t.Skip("not UTF-8: no watches.yaml or custom resource holds it")
		}
		obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "x.io/v1", "kind": "X"}}
		var specValue any
		if utiljson.Unmarshal(spec, &specValue) == nil {
			obj.Object["spec"] = specValue
		} else {
			// The decoder leaves what it read before the error (1e700
			// does not fit a float64); no custom resource holds it.
			specValue = nil
		}
		overrides := map[string]string{k1: v1}
		if k2 != k1 {
			overrides[k2] = v2
		}
		objBefore := runtime.DeepCopyJSON(obj.Object)
		overridesBefore := fmt.Sprint(overrides)

		got, err := For(obj, overrides)
		again, errAgain := For(obj, overrides)
		if !reflect.DeepEqual(got, again) || fmt.Sprint(err) != fmt.Sprint(errAgain) {
			t.Fatalf("For is not deterministic: %v, %v; then %v, %v", got, err, again, errAgain)
		}
		if !reflect.DeepEqual(obj.Object, objBefore) {
			t.Fatalf("For changed the custom resource: %v, was %v", obj.Object, objBefore)
		}
		if fmt.Sprint(overrides) != overridesBefore {
			t.Fatalf("For changed the overrides: %v, were %s", overrides, overridesBefore)
		}
		if err != nil {
			if !strings.Contains(err.Error(), fmt.Sprintf("override value %q", k1)) &&
				!strings.Contains(err.Error(), fmt.Sprintf("override value %q", k2)) {
				t.Fatalf("error %q names neither override %q nor %q", err, k1, k2)
			}
			return
		}

		specMap, _ := specValue.(map[string]any)
		for k, v := range specMap {
			if !named(k, overrides) && !reflect.DeepEqual(got[k], v) {
				t.Errorf("spec value %q = %v became %v, though no override names it (overrides %q)", k, v, got[k], overrides)
			}
		}
		for k, v := range overrides {
			if plainWord.MatchString(k) && plainWord.MatchString(v) && !keyword(v) && !namedByOther(k, overrides) && got[k] != v {
				t.Errorf("override %s=%s gave %q = %#v, want the string %q", k, v, k, got[k], v)
			}
		}

		b, err := json.Marshal(got)
		if err != nil {
			t.Fatalf("values do not encode as JSON: %v", err)
		}
		var stored map[string]any
		if err := utiljson.Unmarshal(b, &stored); err != nil {
			t.Fatalf("values do not decode from their JSON %s: %v", b, err)
		}
		if Digest(got) != Digest(stored) {
			t.Errorf("digest %s of %v changed to %s after a JSON round trip (%s)", Digest(got), got, Digest(stored), b)
		}
	})
}

// named says whether any override may name the top-level value k: its key or value (a value can hold
// ",other=x", which strvals reads as another assignment) holds k, escapes aside.
func named(k string, overrides map[string]string) bool {
	for ok, ov := range overrides {
		if strings.Contains(strings.ReplaceAll(ok+"="+ov, `\`, ""), k) {
			return true
		}
	}
	return false
}

// namedByOther says whether an override other than the one of key k may name k.
func namedByOther(k string, overrides map[string]string) bool {
	others := map[string]string{}
	for ok, ov := range overrides {
		if ok != k {
			others[ok] = ov
		}
	}
	return named(k, others)
}

// keyword reports whether Helm's --set parsing (strvals, which overrideValues
// follow, as operator-sdk's do) reads v as a boolean or null: in any case,
// "truE" included (found by a 10-minute run of FuzzFor).
func keyword(v string) bool {
	return strings.EqualFold(v, "true") || strings.EqualFold(v, "false") || strings.EqualFold(v, "null")
}
