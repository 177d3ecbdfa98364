package helm

import (
	"crypto/sha256"
	"encoding/hex"
	"sort"

	"helm.sh/helm/v3/pkg/chart"
)

// ChartDigest returns a digest of every file of a chart and of its
// dependencies: equal charts give equal digests, any edit changes it.
func ChartDigest(c *chart.Chart) string {
	h := sha256.New()
	var walk func(c *chart.Chart)
	walk = func(c *chart.Chart) {
		files := append([]*chart.File(nil), c.Raw...)
		sort.Slice(files, func(i, j int) bool { return files[i].Name < files[j].Name })
		for _, f := range files {
			h.Write([]byte(f.Name))
			h.Write([]byte{0})
			h.Write(f.Data)
			h.Write([]byte{0})
		}
		deps := append([]*chart.Chart(nil), c.Dependencies()...)
		sort.Slice(deps, func(i, j int) bool { return deps[i].Name() < deps[j].Name() })
		for _, d := range deps {
			h.Write([]byte("dependency:" + d.Name()))
			walk(d)
		}
	}
	walk(c)
	return hex.EncodeToString(h.Sum(nil))[:32]
}
