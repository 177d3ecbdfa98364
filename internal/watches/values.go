package watches

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"text/template"

	sprig "github.com/Masterminds/sprig/v3"

	"github.com/rudder-operator/rudder/internal/releasevalues"
)

// Values returns the pipeline that computes the release values of w's
// resources: their spec under OverrideValues, over ValuesFrom's and their
// annotation's sources, then w's hooks' values.
func (w Watch) Values() releasevalues.Pipeline {
	return releasevalues.Pipeline{Overrides: w.OverrideValues, Sources: w.ValuesFrom}
}

// overrideValues expands each override value as operator-sdk does: environment variables ($VAR and ${VAR})
// first, then the result rendered as a Go template with the sprig functions and no data. Nil stays nil.
// Messages show values as written, and no value read from the environment: it may be a secret.
func (e *entry) overrideValues(in stringMap) map[string]string {
	if in == nil {
		return nil
	}
	out := make(map[string]string, len(in))
	for _, k := range slices.Sorted(maps.Keys(in)) {
		v, err := expandValue(k, in[k])
		if err != nil {
			e.fail("overrideValues."+k, err, "%q %v; write a Go template with sprig functions, as operator-sdk takes",
				in[k], err)
			continue
		}
		out[k] = v
	}
	return out
}

// expandValue expands value, the override value of key. Its errors show no value read from the environment:
// each is replaced by the variable's name.
func expandValue(key, value string) (string, error) {
	used := make(map[string]string)
	expanded := os.Expand(value, func(name string) string {
		v := os.Getenv(name)
		if v != "" {
			used[name] = v
		}
		return v
	})
	t, err := template.New(key).Funcs(sprig.TxtFuncMap()).Parse(expanded)
	if err != nil {
		return "", redact(fmt.Errorf("does not parse after $ENV expansion: %w", err), used)
	}
	var b strings.Builder
	if err := t.Execute(&b, nil); err != nil {
		return "", redact(fmt.Errorf("fails to render after $ENV expansion: %w", err), used)
	}
	return b.String(), nil
}

// redact replaces in err's message each value of env, a map of variable names to values, by "${name}".
func redact(err error, env map[string]string) error {
	names := slices.SortedFunc(maps.Keys(env), func(a, b string) int {
		return cmp.Compare(len(env[b]), len(env[a])) // longest value first, so none is left half replaced
	})
	msg := err.Error()
	for _, name := range names {
		msg = strings.ReplaceAll(msg, env[name], "${"+name+"}")
	}
	if msg == err.Error() {
		return err
	}
	return errors.New(msg)
}
