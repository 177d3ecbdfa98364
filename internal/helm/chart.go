package helm

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"

	"helm.sh/helm/v4/pkg/chart/common"
	"helm.sh/helm/v4/pkg/chart/loader/archive"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/ignore"
)

// Chart is a kind's chart as the other packages see it: its name, its
// metadata, its values schema, its templates and a digest of its files. Only
// this package reaches Helm's own type, to render it.
//
// Load one for each Helm action rather than sharing one: Helm changes a chart
// while installing it (it drops disabled subcharts, for one).
type Chart struct {
	chart *chart.Chart
}

// Name is the chart's name (Chart.yaml name).
func (c *Chart) Name() string { return c.chart.Name() }

// Version is Chart.yaml's version.
func (c *Chart) Version() string { return c.chart.Metadata.Version }

// Description is Chart.yaml's description.
func (c *Chart) Description() string { return c.chart.Metadata.Description }

// Annotations are Chart.yaml's annotations; nil when it has none.
func (c *Chart) Annotations() map[string]string { return c.chart.Metadata.Annotations }

// Schema is the chart's values.schema.json; nil when it has none.
func (c *Chart) Schema() []byte { return c.chart.Schema }

// Defaults are the chart's own values (values.yaml), as Helm reads them.
// The caller must not change them.
func (c *Chart) Defaults() map[string]any { return c.chart.Values }

// Templates returns the content of every template of the chart and of its
// subcharts, the chart's own first.
func (c *Chart) Templates() [][]byte {
	var out [][]byte
	var walk func(c *chart.Chart)
	walk = func(c *chart.Chart) {
		for _, t := range c.Templates {
			out = append(out, t.Data)
		}
		for _, d := range c.Dependencies() {
			walk(d)
		}
	}
	walk(c.chart)
	return out
}

// Digest returns a digest of every file of the chart and of its
// dependencies: equal charts give equal digests, any edit changes it.
func (c *Chart) Digest() string {
	h := sha256.New()
	var walk func(c *chart.Chart)
	walk = func(c *chart.Chart) {
		files := append([]*common.File(nil), c.Raw...)
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
	walk(c.chart)
	return hex.EncodeToString(h.Sum(nil))[:32]
}

// utf8BOM is dropped from the start of chart files, as Helm does.
var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// LoadChart loads the chart in directory dir of fsys as `helm install ./dir` would load it from disk: every
// file, including _helpers.tpl, dotfiles and subcharts under charts/, less those the chart's .helmignore
// names and dotfiles in templates/. Symbolic links are followed where fsys follows them (os.DirFS does).
// It returns a new chart on every call.
func LoadChart(fsys fs.FS, dir string) (*Chart, error) {
	c, err := loadChart(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("load chart %s: %w", dir, err)
	}
	return &Chart{chart: c}, nil
}

func loadChart(fsys fs.FS, dir string) (*chart.Chart, error) {
	if !fs.ValidPath(dir) {
		return nil, &fs.PathError{Op: "load", Path: dir, Err: fs.ErrInvalid}
	}
	rules, err := ignoreRules(fsys, dir)
	if err != nil {
		return nil, err
	}
	var files []*archive.BufferedFile
	if err := readDir(fsys, dir, "", rules, &files); err != nil {
		return nil, err
	}
	return loader.LoadFiles(files)
}

// ignoreRules reads the chart's .helmignore, if any, and adds Helm's defaults.
func ignoreRules(fsys fs.FS, dir string) (*ignore.Rules, error) {
	rules := ignore.Empty()
	data, err := fs.ReadFile(fsys, path.Join(dir, ignore.HelmIgnore))
	switch {
	case err == nil:
		if rules, err = ignore.Parse(bytes.NewReader(data)); err != nil {
			return nil, fmt.Errorf("parse %s: %w", ignore.HelmIgnore, err)
		}
	case !errors.Is(err, fs.ErrNotExist):
		return nil, err
	}
	rules.AddDefaults()
	return rules, nil
}

// readDir appends to files every file under rel, a directory of the chart in dir, that rules keep; names are
// relative to the chart, as loader.LoadFiles wants them. It mirrors loader.LoadDir.
func readDir(fsys fs.FS, dir, rel string, rules *ignore.Rules, files *[]*archive.BufferedFile) error {
	entries, err := fs.ReadDir(fsys, path.Join(dir, rel))
	if err != nil {
		return err
	}
	for _, entry := range entries {
		name := path.Join(rel, entry.Name())
		full := path.Join(dir, name)
		fi, err := fs.Stat(fsys, full) // follows a symbolic link, as Helm does
		if err != nil {
			return err
		}
		if rules.Ignore(name, fi) {
			continue
		}
		if fi.IsDir() {
			if err := readDir(fsys, dir, name, rules, files); err != nil {
				return err
			}
			continue
		}
		if !fi.Mode().IsRegular() {
			return fmt.Errorf("cannot load irregular file %s as it has file mode type bits set", name)
		}
		data, err := fs.ReadFile(fsys, full)
		if err != nil {
			return fmt.Errorf("read %s: %w", name, err)
		}
		size := int64(len(data))
		for _, f := range *files {
			size += int64(len(f.Data))
		}
		if size > archive.MaxDecompressedChartSize { // as Helm's loader bounds a chart
			return fmt.Errorf("chart is larger than the maximum chart size %d at file %q", archive.MaxDecompressedChartSize, name)
		}
		*files = append(*files, &archive.BufferedFile{Name: name, Data: bytes.TrimPrefix(data, utf8BOM)})
	}
	return nil
}

// Chart reads the chart stored with revision version of release name: what
// an upgrade that keeps a release on the chart it runs renders. Only a
// revision the Client trusts is read. It returns a new chart on every call.
func (c *Client) Chart(name string, version int) (*Chart, error) {
	c.read.afresh()
	rel, err := c.get(name, version)
	if err != nil {
		return nil, fmt.Errorf("reading the chart of release %q revision %d: %w", name, version, err)
	}
	if rel.Chart == nil {
		return nil, fmt.Errorf("release %q revision %d stores no chart", name, version)
	}
	return &Chart{chart: rel.Chart}, nil
}
