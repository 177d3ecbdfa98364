package valuesfrom

import (
	"context"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/rudder-operator/rudder/internal/helm"
)

// Annotation lists a custom resource's own sources, after its kind's.
const Annotation = "rudder.dev/values-from"

// DefaultValuesKey is the key read when a source names none.
const DefaultValuesKey = "values.yaml"

// Source is one ConfigMap or Secret key to take values from.
type Source struct {
	// Kind is ConfigMap or Secret.
	Kind string `json:"kind"`
	// Name is the object's name, in the custom resource's namespace.
	Name string `json:"name"`
	// ValuesKey is the key holding the values; DefaultValuesKey when empty.
	ValuesKey string `json:"valuesKey,omitempty"`
	// TargetPath, when set, puts the key's content, as a string, at this path
	// (Helm's --set syntax, e.g. config.DB_PASSWORD); else the content is a
	// YAML mapping merged at the root.
	TargetPath string `json:"targetPath,omitempty"`
	// Optional sources that do not exist, or lack the key, are skipped;
	// others hold the release until they do.
	Optional bool `json:"optional,omitempty"`
}

func (s Source) key() string {
	if s.ValuesKey == "" {
		return DefaultValuesKey
	}
	return s.ValuesKey
}

func (s Source) String() string { return fmt.Sprintf("%s %s (key %s)", s.Kind, s.Name, s.key()) }

// Check returns the problems of s, each naming its field under at (such as
// "valuesFrom[0]") and the fix.
func (s Source) Check(at string) []error {
	var errs []error
	if s.Kind != "ConfigMap" && s.Kind != "Secret" {
		errs = append(errs, fmt.Errorf("%s.kind: %q is neither ConfigMap nor Secret; use one of them (case sensitive)", at, s.Kind))
	}
	if s.Name == "" {
		errs = append(errs, fmt.Errorf("%s.name: empty; name the %s in the resource's namespace", at, kindOr(s.Kind)))
	}
	if s.TargetPath != "" {
		if err := helm.ParseSetString(s.TargetPath+"=x", map[string]any{}); err != nil {
			errs = append(errs, fmt.Errorf("%s.targetPath: %q is not a path in --set syntax, such as config.password or list[0].name: %w", at, s.TargetPath, err))
		}
	}
	return errs
}

func kindOr(kind string) string {
	if kind == "Secret" || kind == "ConfigMap" {
		return kind
	}
	return "ConfigMap or Secret"
}

// Sources returns the sources of obj: the kind's, then those of its
// annotation. A malformed annotation is an error naming the annotation and
// the entry.
func Sources(kind []Source, annotations map[string]string) ([]Source, error) {
	value, ok := annotations[Annotation]
	if !ok {
		return kind, nil
	}
	var own []Source
	if err := yaml.UnmarshalStrict([]byte(value), &own); err != nil {
		return nil, fmt.Errorf("annotation %s: want a YAML list of sources, each with kind (ConfigMap or Secret), name, and optionally valuesKey, targetPath and optional: %w", Annotation, err)
	}
	var errs []error
	for i, s := range own {
		errs = append(errs, s.Check(fmt.Sprintf("annotation %s: [%d]", Annotation, i))...)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return append(append([]Source(nil), kind...), own...), nil
}

// Values are the values read from a list of sources.
type Values struct {
	// Merged holds the sources' values merged in order.
	Merged map[string]any
	// Shadow is Merged with every value that came from a Secret replaced by
	// the Secret's identity and version: its digest changes when a Secret
	// does, and tells nothing of what it holds. Nil when no Secret was read.
	Shadow map[string]any
	// Secrets are the values taken from Secrets, as strings: the content of
	// a key put at a targetPath, and every string and number of a mapping.
	// An error whose message becomes a condition, an Event or a log line
	// has them removed first (package redact).
	Secrets []string
}

// MissingError is a required source that does not exist or lacks its key.
type MissingError struct{ Source Source }

func (e *MissingError) Error() string {
	return fmt.Sprintf("%s %s has no key %s; create it, or mark the source optional", e.Source.Kind, e.Source.Name, e.Source.key())
}

// ContentError is a source whose key does not hold what it should.
type ContentError struct{ error }

func (e *ContentError) Unwrap() error { return e.error }

// Fixable reports whether err is a problem of the sources themselves (one
// missing, or its content), which only a change of them resolves, rather
// than a failure to read them.
func Fixable(err error) bool {
	var m *MissingError
	var c *ContentError
	return errors.As(err, &m) || errors.As(err, &c)
}

// Read reads sources from namespace ns with reader and merges them in order.
func Read(ctx context.Context, reader client.Reader, ns string, sources []Source) (Values, error) {
	out := Values{Merged: map[string]any{}}
	var shadow map[string]any
	for _, s := range sources {
		data, version, found, err := read(ctx, reader, types.NamespacedName{Namespace: ns, Name: s.Name}, s)
		if err != nil {
			return Values{}, err
		}
		if !found {
			if s.Optional {
				continue
			}
			return Values{}, &MissingError{Source: s}
		}
		vals, err := parse(s, data)
		if err != nil {
			return Values{}, &ContentError{err}
		}
		if s.Kind == "Secret" && shadow == nil {
			shadow = copyMap(out.Merged)
		}
		Merge(out.Merged, vals)
		switch {
		case s.Kind == "Secret":
			Merge(shadow, shadowOf(vals, fmt.Sprintf("Secret %s %s", s.Name, version)).(map[string]any))
			out.Secrets = leaves(out.Secrets, vals)
		case shadow != nil:
			Merge(shadow, vals)
		}
	}
	out.Shadow = shadow
	return out, nil
}

// read returns the content of s's key and the object's uid and version.
func read(ctx context.Context, reader client.Reader, key types.NamespacedName, s Source) (data []byte, version string, found bool, err error) {
	var obj client.Object
	switch s.Kind {
	case "Secret":
		obj = &corev1.Secret{}
	default:
		obj = &corev1.ConfigMap{}
	}
	if err := reader.Get(ctx, key, obj); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, "", false, nil
		}
		return nil, "", false, fmt.Errorf("reading %s %s for its values: %w", s.Kind, s.Name, err)
	}
	version = string(obj.GetUID()) + "/" + obj.GetResourceVersion()
	switch o := obj.(type) {
	case *corev1.Secret:
		data, found = o.Data[s.key()]
	case *corev1.ConfigMap:
		var str string
		if str, found = o.Data[s.key()]; found {
			data = []byte(str)
		} else {
			data, found = o.BinaryData[s.key()]
		}
	}
	return data, version, found, nil
}

// parse turns a key's content into values. An error about a Secret's
// content says where, never what.
func parse(s Source, data []byte) (map[string]any, error) {
	if s.TargetPath != "" {
		vals := map[string]any{}
		escaped := strings.NewReplacer(`\`, `\\`, `,`, `\,`).Replace(string(data))
		if err := helm.ParseSetString(s.TargetPath+"="+escaped, vals); err != nil {
			return nil, fmt.Errorf("%s: cannot put the content at targetPath %q; check the path", s, s.TargetPath)
		}
		return vals, nil
	}
	vals := map[string]any{}
	if err := yaml.Unmarshal(data, &vals); err != nil {
		if s.Kind == "Secret" {
			return nil, fmt.Errorf("%s is not a YAML mapping of values; fix the key, or set targetPath to use it as one value", s)
		}
		return nil, fmt.Errorf("%s is not a YAML mapping of values (%w); fix the key, or set targetPath to use it as one value", s, err)
	}
	return vals, nil
}

// Merge merges src into dst, src winning: mappings merge key by key, any
// other value replaces what dst has. dst must not be nil.
func Merge(dst, src map[string]any) {
	for k, v := range src {
		sm, srcMap := v.(map[string]any)
		dm, dstMap := dst[k].(map[string]any)
		if srcMap && dstMap {
			Merge(dm, sm)
			continue
		}
		dst[k] = copyValue(v)
	}
}

// leaves appends to out the strings and numbers of v, as strings.
// Booleans and nulls tell nothing.
func leaves(out []string, v any) []string {
	switch t := v.(type) {
	case map[string]any:
		for _, e := range t {
			out = leaves(out, e)
		}
	case []any:
		for _, e := range t {
			out = leaves(out, e)
		}
	case string:
		out = append(out, t)
	case bool, nil:
	default:
		out = append(out, fmt.Sprint(t))
	}
	return out
}

// shadowOf replaces each leaf of v with mark.
func shadowOf(v any, mark string) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			out[k] = shadowOf(e, mark)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = shadowOf(e, mark)
		}
		return out
	default:
		return mark
	}
}

func copyMap(m map[string]any) map[string]any { return copyValue(m).(map[string]any) }

func copyValue(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			out[k] = copyValue(e)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = copyValue(e)
		}
		return out
	default:
		return v
	}
}

// Under returns the release values of a resource whose own values (its spec
// with its kind's overrides) are own, when its sources gave v: own merged
// over v.Merged, and the values its digest is computed from, own merged over
// v.Shadow (nil when no Secret was read: the digest is then of vals). The
// reconciler and `rudder diff` both compute them so. own is not changed.
func (v Values) Under(own map[string]any) (vals, digested map[string]any) {
	vals = map[string]any{}
	if v.Merged != nil {
		vals = v.Merged
	}
	Merge(vals, own)
	if v.Shadow != nil {
		digested = v.Shadow
		Merge(digested, own)
	}
	return vals, digested
}
