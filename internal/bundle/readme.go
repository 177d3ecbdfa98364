package bundle

import (
	"fmt"
	"os"
	"strings"
)

// readmeOpening returns the opening of the Markdown file path: its text after the title and before the first
// "## " heading, the CSV's description; and that text's first clause, up to a colon or the end of the first
// sentence, the one-line description OperatorHub lists.
func readmeOpening(path string) (opening, summary string, err error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", "", err
	}
	var lines []string
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "## ") {
			break
		}
		if strings.HasPrefix(line, "# ") {
			continue
		}
		lines = append(lines, line)
	}
	opening = strings.TrimSpace(strings.Join(lines, "\n"))
	if opening == "" {
		return "", "", fmt.Errorf("%s: no text before its first \"## \" heading to describe the operator with", path)
	}
	summary = strings.Join(strings.Fields(opening), " ")
	if i := strings.IndexAny(summary, ":."); i >= 0 {
		summary = summary[:i]
	}
	return opening, summary + ".", nil
}
