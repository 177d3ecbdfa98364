package helm

import (
	"fmt"

	"helm.sh/helm/v4/pkg/strvals"
)

// ParseSet merges one value in Helm's --set syntax (path=value; a value is
// typed as YAML would type it) into vals.
func ParseSet(expr string, vals map[string]any) error {
	return parseSet(expr, vals, strvals.ParseInto)
}

// ParseSetString is ParseSet with the value always a string, as --set-string.
func ParseSetString(expr string, vals map[string]any) error {
	return parseSet(expr, vals, strvals.ParseIntoString)
}

// parseSet refuses an expression that sets nothing: Helm 4's parser drops a
// path with an unterminated index ("a[=x", "a[0=x") without an error, where
// Helm 3's said "error parsing index". A value the user set must not vanish.
func parseSet(expr string, vals map[string]any, parse func(string, map[string]any) error) error {
	probe := map[string]any{}
	if err := parse(expr, probe); err != nil {
		return err
	}
	if len(probe) == 0 {
		return fmt.Errorf("%q sets no value: its path is malformed (an index is written name[0])", expr)
	}
	return parse(expr, vals)
}
