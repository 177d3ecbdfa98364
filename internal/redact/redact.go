package redact

import (
	"encoding/base64"
	"encoding/json"
	"sort"
	"strconv"
	"strings"
)

// Mark replaces each secret value found in a message.
const Mark = "[redacted]"

// MinLength is the length under which a value is not looked for. A value of
// one to three characters ("a", "10", "yes") occurs in most messages for
// other reasons, where replacing it would leave nothing to read; a value
// that short is guessed more easily than read from a message anyway. A
// Secret value meant to be secret is longer.
const MinLength = 4

// Redactor replaces the values it was given in messages. The zero value and
// a nil *Redactor replace nothing.
type Redactor struct {
	forms []string // every form of every value, longest first
}

// New returns a Redactor of values, each looked for as it is, JSON-quoted
// (as Go's %q and encoding/json write it, and as a YAML double-quoted
// scalar), YAML single-quoted, base64-encoded (as a Secret's data holds
// it), and line by line for a value of several lines. Forms shorter than
// MinLength are left out.
func New(values ...string) *Redactor {
	seen := map[string]bool{}
	add := func(s string) {
		if len(s) >= MinLength {
			seen[s] = true
		}
	}
	for _, v := range values {
		if len(v) < MinLength {
			continue
		}
		add(v)
		add(unquoted(strconv.Quote(v)))
		if b, err := json.Marshal(v); err == nil {
			add(unquoted(string(b)))
		}
		add(strings.ReplaceAll(v, "'", "''"))
		add(base64.StdEncoding.EncodeToString([]byte(v)))
		if strings.Contains(v, "\n") {
			for _, line := range strings.Split(v, "\n") {
				add(strings.TrimSpace(line))
			}
		}
	}
	r := &Redactor{forms: make([]string, 0, len(seen))}
	for s := range seen {
		r.forms = append(r.forms, s)
	}
	sort.Slice(r.forms, func(i, j int) bool {
		if len(r.forms[i]) != len(r.forms[j]) {
			return len(r.forms[i]) > len(r.forms[j])
		}
		return r.forms[i] < r.forms[j]
	})
	return r
}

func unquoted(q string) string { return q[1 : len(q)-1] }

// Empty reports whether r replaces nothing.
func (r *Redactor) Empty() bool { return r == nil || len(r.forms) == 0 }

// String returns s with every occurrence of a value replaced by Mark. Where
// occurrences overlap, the whole stretch they cover is replaced once: no
// part of either value is left.
func (r *Redactor) String(s string) string {
	if r.Empty() {
		return s
	}
	type span struct{ from, to int }
	var spans []span
	for _, f := range r.forms {
		for at := 0; ; {
			i := strings.Index(s[at:], f)
			if i < 0 {
				break
			}
			spans = append(spans, span{at + i, at + i + len(f)})
			at += i + 1
		}
	}
	if len(spans) == 0 {
		return s
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].from < spans[j].from })
	var b strings.Builder
	last := 0
	for i := 0; i < len(spans); {
		from, to := spans[i].from, spans[i].to
		for i++; i < len(spans) && spans[i].from <= to; i++ {
			to = max(to, spans[i].to)
		}
		b.WriteString(s[last:from])
		b.WriteString(Mark)
		last = to
	}
	b.WriteString(s[last:])
	return b.String()
}

// Error returns err with its message redacted, or err itself when its
// message holds no value. The error returned unwraps to err, so that
// errors.Is and errors.As still see what it is (an API status, a sentinel);
// whoever takes a message from an error it finds that way must redact that
// message too.
func (r *Redactor) Error(err error) error {
	if err == nil || r.Empty() {
		return err
	}
	msg := err.Error()
	red := r.String(msg)
	if red == msg {
		return err
	}
	return &redacted{msg: red, err: err}
}

type redacted struct {
	msg string
	err error
}

func (e *redacted) Error() string { return e.msg }
func (e *redacted) Unwrap() error { return e.err }
