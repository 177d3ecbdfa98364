package watches

import (
	"fmt"
	"strings"
)

// DriftMode is what rudder does when an object of a release differs from its deployed revision in a field rudder
// applies of it (the chart's fields, less the ignored ones), or is gone: someone edited or deleted it outside Helm.
type DriftMode string

const (
	// DriftEnabled applies the revision's fields again (server-side apply), with a DriftRepaired event naming them.
	DriftEnabled DriftMode = "enabled"
	// DriftWarn changes nothing: the Drifted condition names the objects that differ, and a DriftDetected
	// event is recorded when that list changes.
	DriftWarn DriftMode = "warn"
	// DriftDisabled neither compares nor repairs.
	DriftDisabled DriftMode = "disabled"
)

// Drift says how drift of a kind's release objects is handled.
type Drift struct {
	// Mode is what a difference leads to. Default DriftEnabled.
	Mode DriftMode
	// Ignore lists fields another controller owns: left out of what rudder applies, they are neither compared nor
	// put back.
	Ignore []DriftIgnore
}

// Repairs reports whether objects that differ are put back: mode enabled, or
// unset.
func (d Drift) Repairs() bool { return d.Mode != DriftWarn && d.Mode != DriftDisabled }

// DriftIgnore is one ignore rule: fields of the objects it targets.
type DriftIgnore struct {
	// Paths are RFC 6901 JSON pointers into an object, such as /spec/replicas, parsed into their tokens.
	Paths []Pointer
	// Kind and Name, when set, limit the rule to objects of that kind and name.
	Kind, Name string
}

// Pointer is a parsed JSON pointer: its reference tokens, unescaped.
type Pointer []string

// String returns p as written.
func (p Pointer) String() string {
	var b strings.Builder
	for _, t := range p {
		b.WriteByte('/')
		b.WriteString(strings.NewReplacer("~", "~0", "/", "~1").Replace(t))
	}
	return b.String()
}

// ParsePointer parses an RFC 6901 JSON pointer that names a field below the object's root.
func ParsePointer(s string) (Pointer, error) {
	if !strings.HasPrefix(s, "/") {
		return nil, fmt.Errorf("%q does not start with /; write a JSON pointer such as /spec/replicas", s)
	}
	if s == "/" {
		return nil, fmt.Errorf(`"/" names a field with an empty name; name a field below the object, such as /spec/replicas`)
	}
	tokens := strings.Split(s[1:], "/")
	for i, t := range tokens {
		if strings.Contains(strings.NewReplacer("~0", "", "~1", "").Replace(t), "~") {
			return nil, fmt.Errorf("%q has a ~ that is not ~0 (for ~) or ~1 (for /)", s)
		}
		if t == "-" {
			return nil, fmt.Errorf(`%q ends in or passes "-", which names no element of a list; use an index such as 0`, s)
		}
		tokens[i] = strings.NewReplacer("~1", "/", "~0", "~").Replace(t)
	}
	return tokens, nil
}

// driftFields is the driftDetection field as written.
type driftFields struct {
	Mode   *string             `json:"mode"`
	Ignore []driftIgnoreFields `json:"ignore"`
}

type driftIgnoreFields struct {
	Paths  []string `json:"paths"`
	Target *struct {
		Kind string `json:"kind"`
		Name string `json:"name"`
	} `json:"target"`
}

// drift checks the driftDetection field and fills in its defaults.
func (e *entry) drift(f *driftFields) Drift {
	if f == nil {
		return Drift{Mode: DriftEnabled}
	}
	d := Drift{Mode: oneOf(e, "driftDetection.mode", f.Mode, DriftEnabled, DriftWarn, DriftDisabled)}
	for i, rule := range f.Ignore {
		field := fmt.Sprintf("driftDetection.ignore[%d]", i)
		if len(rule.Paths) == 0 {
			e.fail(field+".paths", nil, "no paths; list the JSON pointers of the fields to ignore, such as /spec/replicas")
		}
		ig := DriftIgnore{}
		if rule.Target != nil {
			ig.Kind, ig.Name = rule.Target.Kind, rule.Target.Name
			if ig.Kind == "" && ig.Name == "" {
				e.fail(field+".target", nil, "names neither a kind nor a name; set kind (e.g. Deployment), name, or both, or leave target out for every object")
			}
		}
		for j, s := range rule.Paths {
			p, err := ParsePointer(s)
			if err != nil {
				e.fail(fmt.Sprintf("%s.paths[%d]", field, j), err, "%s", err.Error())
				continue
			}
			ig.Paths = append(ig.Paths, p)
		}
		d.Ignore = append(d.Ignore, ig)
	}
	return d
}

// Ignored returns the paths that the rules ignore on an object of kind and name.
func (d Drift) Ignored(kind, name string) []Pointer {
	var out []Pointer
	for _, ig := range d.Ignore {
		if (ig.Kind == "" || ig.Kind == kind) && (ig.Name == "" || ig.Name == name) {
			out = append(out, ig.Paths...)
		}
	}
	return out
}
