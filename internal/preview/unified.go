package preview

import (
	"fmt"
	"strings"
)

// contextLines is how many unchanged lines a hunk shows around a change, as
// diff -u does.
const contextLines = 3

// unified returns the unified diff (diff -u) of the lines of a and b under
// the headers from and to; "" when they are equal. Objects are small: a
// longest-common-subsequence table is enough.
func unified(from, to, a, b string) string {
	x, y := splitLines(a), splitLines(b)
	ops := editScript(x, y)
	changed := false
	for _, op := range ops {
		changed = changed || op.kind != ' '
	}
	if !changed {
		return ""
	}
	var out strings.Builder
	fmt.Fprintf(&out, "--- %s\n+++ %s\n", from, to)
	for start := 0; start < len(ops); {
		// Find the next change, and the hunk around it.
		first := start
		for first < len(ops) && ops[first].kind == ' ' {
			first++
		}
		if first == len(ops) {
			break
		}
		lo := max(first-contextLines, start)
		hi := first
		for i := first; i < len(ops); i++ {
			if ops[i].kind != ' ' {
				hi = i
			} else if i-hi > 2*contextLines {
				break
			}
		}
		hi = min(hi+contextLines+1, len(ops))
		writeHunk(&out, ops[lo:hi])
		start = hi
	}
	return out.String()
}

// edit is one line of an edit script: ' ' kept, '-' removed, '+' added, with
// the line's number in a and b (1-based) before it.
type edit struct {
	kind     byte
	line     string
	atA, atB int
}

func writeHunk(out *strings.Builder, ops []edit) {
	na, nb := 0, 0
	for _, op := range ops {
		if op.kind != '+' {
			na++
		}
		if op.kind != '-' {
			nb++
		}
	}
	startA, startB := ops[0].atA, ops[0].atB
	if na > 0 {
		startA++
	}
	if nb > 0 {
		startB++
	}
	fmt.Fprintf(out, "@@ -%s +%s @@\n", hunkRange(startA, na), hunkRange(startB, nb))
	for _, op := range ops {
		out.WriteByte(op.kind)
		out.WriteString(op.line)
		out.WriteByte('\n')
	}
}

func hunkRange(start, n int) string {
	if n == 1 {
		return fmt.Sprint(start)
	}
	return fmt.Sprintf("%d,%d", start, n)
}

// editScript returns the shortest edit script from x to y, removals before
// additions at each change.
func editScript(x, y []string) []edit {
	// lcs[i][j] is the length of the longest common subsequence of x[i:] and y[j:].
	lcs := make([][]int, len(x)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(y)+1)
	}
	for i := len(x) - 1; i >= 0; i-- {
		for j := len(y) - 1; j >= 0; j-- {
			if x[i] == y[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var ops []edit
	i, j := 0, 0
	for i < len(x) || j < len(y) {
		switch {
		case i < len(x) && j < len(y) && x[i] == y[j]:
			ops = append(ops, edit{kind: ' ', line: x[i], atA: i, atB: j})
			i, j = i+1, j+1
		case i < len(x) && (j == len(y) || lcs[i+1][j] >= lcs[i][j+1]):
			ops = append(ops, edit{kind: '-', line: x[i], atA: i, atB: j})
			i++
		default:
			ops = append(ops, edit{kind: '+', line: y[j], atA: i, atB: j})
			j++
		}
	}
	return ops
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}
