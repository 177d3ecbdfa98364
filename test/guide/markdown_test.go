package guide

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// block is one fenced code block of the guide.
type block struct {
	line  int               // of the opening fence, counting from 1
	lang  string            // the first word of the info string
	attrs map[string]string // the other words: key=value, or a bare word with ""
	body  string            // the lines between the fences, each ending in "\n"
}

// parseBlocks returns the fenced (```) code blocks of a Markdown text. A
// fence may be indented, as in a list item; its body loses that indentation.
func parseBlocks(text string) ([]block, error) {
	var blocks []block
	var cur *block
	indent := ""
	for i, l := range strings.Split(text, "\n") {
		trimmed := strings.TrimLeft(l, " ")
		if cur == nil {
			if strings.HasPrefix(trimmed, "```") {
				indent = l[:len(l)-len(trimmed)]
				info := strings.Fields(strings.TrimPrefix(trimmed, "```"))
				cur = &block{line: i + 1, attrs: map[string]string{}}
				for j, w := range info {
					if j == 0 {
						cur.lang = w
						continue
					}
					k, v, _ := strings.Cut(w, "=")
					cur.attrs[k] = v
				}
			}
			continue
		}
		if trimmed == "```" {
			blocks = append(blocks, *cur)
			cur = nil
			continue
		}
		cur.body += strings.TrimPrefix(l, indent) + "\n"
	}
	if cur != nil {
		return nil, fmt.Errorf("the block at line %d is never closed", cur.line)
	}
	return blocks, nil
}

// sessionBlock is a `console run` block: commands and the output each prints.
type sessionBlock struct {
	commands []command
}

type command struct {
	line   string   // after "$ "
	lineNo int      // in the guide
	output []string // the lines after it, up to the next command
}

func parseSession(b block) sessionBlock {
	var s sessionBlock
	for i, l := range strings.Split(strings.TrimSuffix(b.body, "\n"), "\n") {
		if c, ok := strings.CutPrefix(l, "$ "); ok {
			s.commands = append(s.commands, command{line: c, lineNo: b.line + 1 + i})
			continue
		}
		if n := len(s.commands); n > 0 {
			s.commands[n-1].output = append(s.commands[n-1].output, l)
		}
	}
	for i := range s.commands {
		s.commands[i].output = outputLines(strings.Join(s.commands[i].output, "\n"))
	}
	return s
}

// outputLines splits printed text into lines without trailing blanks,
// leaving out empty lines.
func outputLines(text string) []string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if l = strings.TrimRight(l, " \t\r"); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// ellipsis in the guide's output stands for any lines (alone on a line) or
// any text (within a line).
const ellipsis = "…"

// matchLines reports whether got is what want shows.
func matchLines(want, got []string) bool {
	if len(want) == 0 {
		return len(got) == 0
	}
	if want[0] == ellipsis {
		for i := 0; i <= len(got); i++ {
			if matchLines(want[1:], got[i:]) {
				return true
			}
		}
		return false
	}
	return len(got) > 0 && matchLine(want[0], got[0]) && matchLines(want[1:], got[1:])
}

// age is how kubectl shows an AGE, which differs from run to run.
var age = regexp.MustCompile(`^[0-9]+[smhd]([0-9]+[smh])?$`)

// matchLine compares one line: word by word (an age matches any age), or,
// when want holds an ellipsis, the parts around each ellipsis in order.
func matchLine(want, got string) bool {
	if strings.Contains(want, ellipsis) {
		parts := strings.Split(want, ellipsis)
		if !strings.HasPrefix(got, parts[0]) {
			return false
		}
		rest := got[len(parts[0]):]
		for _, p := range parts[1 : len(parts)-1] {
			i := strings.Index(rest, p)
			if i < 0 {
				return false
			}
			rest = rest[i+len(p):]
		}
		return strings.HasSuffix(rest, parts[len(parts)-1])
	}
	w, g := strings.Fields(want), strings.Fields(got)
	if len(w) != len(g) {
		return false
	}
	for i := range w {
		if w[i] != g[i] && (!age.MatchString(w[i]) || !age.MatchString(g[i])) {
			return false
		}
	}
	return true
}

func TestMatchLines(t *testing.T) {
	tests := []struct {
		name      string
		want, got []string
		match     bool
	}{
		{name: "same", want: []string{"a b"}, got: []string{"a   b"}, match: true},
		{name: "different word", want: []string{"a b"}, got: []string{"a c"}},
		{name: "missing line", want: []string{"a", "b"}, got: []string{"a"}},
		{name: "extra line", want: []string{"a"}, got: []string{"a", "b"}},
		{name: "ages", want: []string{"x Running 12s"}, got: []string{"x Running 3m4s"}, match: true},
		{name: "age is no wildcard", want: []string{"x 12s"}, got: []string{"x Pending"}},
		{name: "ellipsis lines", want: []string{"a", ellipsis, "d"}, got: []string{"a", "b", "c", "d"}, match: true},
		{name: "ellipsis no lines", want: []string{ellipsis, "a", ellipsis}, got: []string{"a"}, match: true},
		{name: "ellipsis in line", want: []string{`{"l":1,` + ellipsis + `,"m":"x",` + ellipsis + `}`}, got: []string{`{"l":1,"ts":2,"m":"x","c":3}`}, match: true},
		{name: "ellipsis in line, wrong part", want: []string{`{"l":1,` + ellipsis + `,"m":"y",` + ellipsis + `}`}, got: []string{`{"l":1,"ts":2,"m":"x","c":3}`}},
		{name: "nothing printed", want: nil, got: nil, match: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := matchLines(tt.want, tt.got); got != tt.match {
				t.Errorf("matchLines(%q, %q) = %v, want %v", tt.want, tt.got, got, tt.match)
			}
		})
	}
}

func TestParseBlocks(t *testing.T) {
	text := "intro\n```yaml file=a/b.yaml\nx: 1\n```\n1. item\n\n   ```console run\n   $ make run\n   …\n   ```\n"
	blocks, err := parseBlocks(text)
	if err != nil {
		t.Fatal(err)
	}
	if len(blocks) != 2 {
		t.Fatalf("%d blocks, want 2", len(blocks))
	}
	if b := blocks[0]; b.lang != "yaml" || b.attrs["file"] != "a/b.yaml" || b.body != "x: 1\n" || b.line != 2 {
		t.Errorf("first block %+v", b)
	}
	s := parseSession(blocks[1])
	if _, ok := blocks[1].attrs["run"]; !ok || len(s.commands) != 1 || s.commands[0].line != "make run" ||
		s.commands[0].lineNo != 8 || len(s.commands[0].output) != 1 || s.commands[0].output[0] != ellipsis {
		t.Errorf("session %+v of block %+v", s, blocks[1])
	}
	if _, err := parseBlocks("```go\nopen\n"); err == nil {
		t.Error("an unclosed block parsed")
	}
}
