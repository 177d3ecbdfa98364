package watches

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/rudder-operator/rudder/internal/valuesfrom"
)

// Defaults for the fields an entry of a watches file may leave out.
const (
	// DefaultMaxHistory is how many release revisions Helm keeps when maxHistory is absent.
	DefaultMaxHistory = 10
	// DefaultMaxConcurrentReconciles is the number of custom resources of one kind reconciled at once when
	// maxConcurrentReconciles is absent. operator-sdk uses the number of CPUs; rudder uses 1 so that the load
	// an operator puts on the API server does not depend on the machine it runs on.
	DefaultMaxConcurrentReconciles = 1
)

// Watch is one entry of a watches file: a kind and the chart that serves it.
type Watch struct {
	// GVK is the custom resource's group, version and kind.
	GVK schema.GroupVersionKind
	// Chart is the chart directory as written in the file.
	Chart string
	// ChartFS is the file system holding the chart directory at ChartDir.
	ChartFS fs.FS
	// ChartDir is the path of the chart directory inside ChartFS: slash separated, no leading slash.
	ChartDir string
	// WatchDependentResources says whether changes to the objects a release created trigger a reconcile of
	// its custom resource. Default true.
	WatchDependentResources bool
	// OverrideValues are Helm values (key in --set syntax) that override the custom resource's spec, after
	// $ENV expansion and template rendering as operator-sdk does. Nil when absent.
	OverrideValues map[string]string
	// ReconcilePeriod is how often a custom resource is reconciled even when nothing changed.
	// Default 0: no periodic resync.
	ReconcilePeriod time.Duration
	// MaxConcurrentReconciles is how many custom resources of this kind are reconciled at once.
	// Default DefaultMaxConcurrentReconciles.
	MaxConcurrentReconciles int
	// Selector picks the custom resources this entry serves by their labels. Default labels.Everything().
	Selector labels.Selector
	// Hooks are the names of the hooks run for this kind, as listed. Nil when absent. Load checks only that the
	// names are non-empty and unique; whether a hook of that name exists is for the caller to check.
	Hooks []string
	// MaxHistory is how many release revisions Helm keeps. Default DefaultMaxHistory.
	MaxHistory int
	// Remediation says how failed installs and upgrades are recovered from. Defaults: see Remediation.
	Remediation Remediation
	// OutOfBand is what rudder does when another Helm client wrote the serving revision. Default
	// OutOfBandRevert.
	OutOfBand OutOfBand
	// Drift is what rudder does about objects edited outside Helm (driftDetection). Default: put back,
	// nothing ignored.
	Drift Drift
	// ValuesFrom are ConfigMap and Secret keys every resource of the kind takes values from, in its own
	// namespace, before its own sources (annotation valuesfrom.Annotation) and its spec. Nil when absent.
	ValuesFrom []valuesfrom.Source
	// Test says how the chart's tests run (test). Default: on request only, within DefaultTestTimeout.
	Test Test
	// ClusterScoped are the cluster-scoped kinds the chart may render (clusterScoped). Every other object
	// of a release must be namespaced, in its custom resource's namespace. Default: none.
	ClusterScoped []schema.GroupKind
	// Rollout says how a change of the chart reaches the kind's resources: in steps (rollout). Default
	// DefaultRollout().
	Rollout Rollout
}

// ChartDigest is what each revision of w's resources is labeled as made
// from besides its values: the digest of w's chart, chart, and, when w has
// overrideValues, of them too. A change of either is a change of the kind's
// chart, which its rollout stages.
func (w Watch) ChartDigest(chart string) string {
	if len(w.OverrideValues) == 0 {
		return chart
	}
	h := sha256.New()
	h.Write([]byte(chart))
	for _, k := range slices.Sorted(maps.Keys(w.OverrideValues)) {
		h.Write([]byte("\x00" + k + "=" + w.OverrideValues[k]))
	}
	return hex.EncodeToString(h.Sum(nil))[:32]
}

// Load reads the watches file name inside fsys, validates every entry and loads every chart. Chart paths are
// relative to the watches file's directory inside fsys and must stay inside fsys. Every problem found is
// reported, each as an *EntryError, joined with errors.Join; a file without entries gives ErrNoKinds.
func Load(fsys fs.FS, name string) ([]Watch, error) {
	data, err := fs.ReadFile(fsys, name)
	if err != nil {
		return nil, fmt.Errorf("read watches file: %w", err)
	}
	base := path.Dir(name)
	return parse(name, data, func(chartPath string) (chartLocation, error) {
		if path.IsAbs(chartPath) {
			return chartLocation{}, fmt.Errorf("%q is an absolute path, but the chart must be inside the file system "+
				"holding the watches file; write it relative to the watches file's directory %q", chartPath, base)
		}
		dir := path.Join(base, chartPath)
		if !fs.ValidPath(dir) {
			return chartLocation{}, fmt.Errorf("%q leads out of the file system holding the watches file; "+
				"write a path relative to the watches file's directory %q that stays inside it", chartPath, base)
		}
		return chartLocation{fsys: fsys, dir: dir, shown: dir, chartYAML: path.Join(dir, chartYAML)}, nil
	})
}

// LoadFile reads the watches file at path on disk, as chart authors do with --watches-file, and checks it as
// Load does. Relative chart paths resolve against the watches file's directory; absolute ones are used as
// they are.
func LoadFile(name string) ([]Watch, error) {
	abs, err := filepath.Abs(name)
	if err != nil {
		return nil, fmt.Errorf("read watches file: %w", err)
	}
	data, err := os.ReadFile(abs)
	if err != nil {
		return nil, fmt.Errorf("read watches file: %w", err)
	}
	base := filepath.Dir(abs)
	return parse(name, data, func(chartPath string) (chartLocation, error) {
		dir := filepath.FromSlash(chartPath)
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(base, dir)
		}
		return chartLocation{
			fsys:      os.DirFS(filepath.Dir(dir)),
			dir:       filepath.Base(dir),
			shown:     dir,
			chartYAML: filepath.Join(dir, chartYAML),
		}, nil
	})
}

// chartYAML is the file that makes a directory a chart.
const chartYAML = "Chart.yaml"

// chartLocation is where a chart path of a watches file leads.
type chartLocation struct {
	fsys      fs.FS
	dir       string // inside fsys
	shown     string // the directory as a user finds it, for messages
	chartYAML string // the Chart.yaml looked for, as a user finds it, for messages
}

// resolveChart turns the chart path of an entry into a location, or says why it cannot.
type resolveChart func(chartPath string) (chartLocation, error)

// parse decodes and checks the watches file data; file names it in messages.
func parse(file string, data []byte, resolve resolveChart) ([]Watch, error) {
	js, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		return nil, fmt.Errorf("%s: not valid YAML: %w", file, err)
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(js, &raws); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) {
			return nil, fmt.Errorf("%s: got %s, want a YAML list of entries, each with group, version, kind and chart",
				file, valueName(typeErr.Value))
		}
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if len(raws) == 0 {
		return nil, fmt.Errorf("%s: %w; add an entry with group, version, kind and chart", file, ErrNoKinds)
	}
	watches := make([]Watch, len(raws))
	var errs []error
	for i, raw := range raws {
		e := &entry{file: file, n: i + 1}
		watches[i] = e.build(raw, resolve)
		errs = append(errs, e.errs...)
	}
	errs = append(errs, checkUnique(file, watches)...)
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return watches, nil
}
