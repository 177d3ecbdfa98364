package helm

import "testing"

// A malformed path is an error, not a value silently dropped (Helm 4's
// parser drops "a[=x"), and a well-formed one sets its value.
func TestParseSet(t *testing.T) {
	for _, expr := range []string{"a[=x", "a[x=x", "a[0=x", "a.b[=1"} {
		vals := map[string]any{"kept": true}
		if err := ParseSet(expr, vals); err == nil {
			t.Errorf("ParseSet(%q) set %v, want an error", expr, vals)
		}
		if err := ParseSetString(expr, vals); err == nil {
			t.Errorf("ParseSetString(%q) set %v, want an error", expr, vals)
		}
	}
	vals := map[string]any{}
	for _, expr := range []string{"a.b=1", "list[0]=x", "n=null"} {
		if err := ParseSet(expr, vals); err != nil {
			t.Errorf("ParseSet(%q): %v", expr, err)
		}
	}
	if vals["a"].(map[string]any)["b"] != int64(1) || vals["list"].([]any)[0] != "x" {
		t.Errorf("values %v", vals)
	}
}
