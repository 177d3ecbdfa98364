package monitoring

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
)

// promql parses with Prometheus's default options: only stable functions, so
// that the files work on a Prometheus without feature flags.
var promql = parser.NewParser(parser.Options{})

// Check parses expr as PromQL and returns a problem for each selector that
// names no series rudder serves, matches a label the series lacks or a value
// the label never takes, or selects a series other programs export too
// without narrowing it to a job. An expression that does not parse is an
// error.
func Check(expr string) ([]string, error) {
	selectors, err := selectorsOf(expr)
	if err != nil {
		return nil, err
	}
	var problems []string
	for _, vs := range selectors {
		problems = append(problems, checkSelector(vs)...)
	}
	return problems, nil
}

// Names returns the metric names expr selects, sorted, each once.
func Names(expr string) ([]string, error) {
	selectors, err := selectorsOf(expr)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, vs := range selectors {
		if name, ok := nameOf(vs); ok && !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names, nil
}

// selectorsOf parses expr and returns every vector selector in it, those
// inside range selectors, subqueries and function arguments included.
func selectorsOf(expr string) ([]*parser.VectorSelector, error) {
	node, err := promql.ParseExpr(expr)
	if err != nil {
		return nil, fmt.Errorf("parsing %q: %w", expr, err)
	}
	var selectors []*parser.VectorSelector
	parser.Inspect(node, func(n parser.Node, _ []parser.Node) error {
		if vs, ok := n.(*parser.VectorSelector); ok {
			selectors = append(selectors, vs)
		}
		return nil
	})
	return selectors, nil
}

// nameOf is the metric name a selector asks for: written before the braces
// or as __name__="…". A pattern of names (__name__=~"…") is no name.
func nameOf(vs *parser.VectorSelector) (string, bool) {
	if vs.Name != "" {
		return vs.Name, true
	}
	for _, m := range vs.LabelMatchers {
		if m.Name == model.MetricNameLabel && m.Type == labels.MatchEqual {
			return m.Value, true
		}
	}
	return "", false
}

func checkSelector(vs *parser.VectorSelector) []string {
	name, ok := nameOf(vs)
	if !ok {
		return []string{fmt.Sprintf("%s: names no single series; write the metric name", vs)}
	}
	s, ok := knownSeries[name]
	if !ok {
		if _, hist := knownSeries[name+"_bucket"]; hist {
			return []string{fmt.Sprintf("%s: %s is a histogram; select %[2]s_bucket, %[2]s_sum or %[2]s_count", vs, name)}
		}
		return []string{fmt.Sprintf("%s: rudder serves no series %s", vs, name)}
	}
	var problems []string
	job := false
	for _, m := range vs.LabelMatchers {
		switch {
		case m.Name == model.MetricNameLabel:
			continue
		case m.Name == "job":
			job = true
		case !slices.Contains(s.Labels, m.Name) && !slices.Contains(targetLabels, m.Name):
			problems = append(problems, fmt.Sprintf("%s: %s has no label %s (it has %s)", vs, name, m.Name, strings.Join(s.Labels, ", ")))
			continue
		}
		if p := checkValues(m, s.Values[m.Name]); p != "" {
			problems = append(problems, fmt.Sprintf("%s: %s", vs, p))
		}
	}
	if shared(name) && !job {
		problems = append(problems, fmt.Sprintf("%s: other programs export %s too; add a job matcher", vs, name))
	}
	return problems
}

// checkValues says which values a matcher asks for that its label never
// takes, when the label's values are a closed set. A regular expression is
// checked when it is a plain alternation (a|b); a Grafana variable ($kind)
// is not checked.
func checkValues(m *labels.Matcher, values []string) string {
	if values == nil {
		return ""
	}
	var asked []string
	switch m.Type {
	case labels.MatchEqual, labels.MatchNotEqual:
		asked = []string{m.Value}
	case labels.MatchRegexp, labels.MatchNotRegexp:
		asked = m.SetMatches()
	}
	var wrong []string
	for _, v := range asked {
		if !strings.Contains(v, "$") && !slices.Contains(values, v) {
			wrong = append(wrong, v)
		}
	}
	if len(wrong) == 0 {
		return ""
	}
	return fmt.Sprintf("%s is never %q (it is one of %s)", m.Name, wrong, strings.Join(values, ", "))
}
