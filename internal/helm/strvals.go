package helm

import "helm.sh/helm/v3/pkg/strvals"

// ParseSet merges one value in Helm's --set syntax (path=value; a value is
// typed as YAML would type it) into vals.
func ParseSet(expr string, vals map[string]any) error {
	return strvals.ParseInto(expr, vals)
}

// ParseSetString is ParseSet with the value always a string, as --set-string.
func ParseSetString(expr string, vals map[string]any) error {
	return strvals.ParseIntoString(expr, vals)
}
