// Package webappchart loads the WebApp chart rudder embeds as Helm's own
// chart type, for the benchmark's baseline (helm-operator-plugins' stock
// reconciler) and its floor, which build on Helm's SDK themselves; rudder
// reaches Helm only through internal/helm.
package webappchart

import (
	"bytes"
	"io/fs"
	"path"
	"sync"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/ignore"

	"github.com/rudder-operator/rudder"
)

// dir is the WebApp chart inside rudder.Files.
const dir = "charts/webapp"

// files reads the chart's files once, less those its .helmignore names.
var files = sync.OnceValues(func() ([]*loader.BufferedFile, error) {
	rules := ignore.Empty()
	if data, err := fs.ReadFile(rudder.Files, path.Join(dir, ignore.HelmIgnore)); err == nil {
		if rules, err = ignore.Parse(bytes.NewReader(data)); err != nil {
			return nil, err
		}
	}
	rules.AddDefaults()
	var out []*loader.BufferedFile
	err := fs.WalkDir(rudder.Files, dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		name := p[len(dir)+1:]
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if rules.Ignore(name, fi) {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		data, err := fs.ReadFile(rudder.Files, p)
		if err != nil {
			return err
		}
		out = append(out, &loader.BufferedFile{Name: name, Data: data})
		return nil
	})
	return out, err
})

// Load returns a new copy of the chart each call: Helm may change a chart
// while it renders or installs it.
func Load() (*chart.Chart, error) {
	fs, err := files()
	if err != nil {
		return nil, err
	}
	return loader.LoadFiles(fs)
}
