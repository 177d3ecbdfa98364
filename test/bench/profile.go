package bench

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// profileScenarios are the scenarios whose requests the profile shows: the
// first three, whose sum the table's requests per resource count, then
// restart and delete all.
var profileScenarios = []string{"cold install", "idle and churn", "change wave", "restart", "delete all"}

// profileFloor is the share of a resource under which a row of the profile
// is added to its last row rather than printed.
const profileFloor = 0.01

// formatProfile prints r's requests per resource by step, verb and resource,
// for each of scenarios 1–3 and all three, the most frequent first; "" when r
// has no profile.
func formatProfile(r *result) string {
	first, later := profileScenarios[:3], profileScenarios[3:]
	total, every := counts{}, counts{}
	for _, name := range first {
		total = total.add(r.Profile[name])
	}
	every = every.add(total)
	for _, name := range later {
		every = every.add(r.Profile[name])
	}
	if len(every) == 0 {
		return ""
	}
	keys := make([]string, 0, len(every))
	for k := range every {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if every[keys[i]] != every[keys[j]] {
			return every[keys[i]] > every[keys[j]]
		}
		return keys[i] < keys[j]
	})
	columns := len(profileScenarios) + 1
	var b strings.Builder
	b.WriteString("| step | verb | resource | " + strings.Join(first, " | ") + " | scenarios 1–3 | " + strings.Join(later, " | ") + " |\n")
	b.WriteString("|---|---|---|" + strings.Repeat("---:|", columns) + "\n")
	row := func(cells []string, vals []float64) {
		for _, v := range vals {
			cells = append(cells, fmt.Sprintf("%.2f", v/float64(r.N)))
		}
		b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
	}
	rest, all := make([]float64, columns), make([]float64, columns)
	for _, k := range keys {
		vals := make([]float64, 0, columns)
		for _, name := range first {
			vals = append(vals, r.Profile[name][k])
		}
		vals = append(vals, total[k])
		for _, name := range later {
			vals = append(vals, r.Profile[name][k])
		}
		for i, v := range vals {
			all[i] += v
		}
		if every[k]/float64(r.N) < profileFloor {
			for i, v := range vals {
				rest[i] += v
			}
			continue
		}
		row(strings.SplitN(k, profileSep, 3), vals)
	}
	if slices.ContainsFunc(rest, func(v float64) bool { return v > 0 }) {
		row([]string{"the rest", "", fmt.Sprintf("each under %.2f", profileFloor)}, rest)
	}
	row([]string{"**all**", "", ""}, all)
	return b.String()
}
