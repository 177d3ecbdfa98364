package bundle

import (
	"bytes"
	"errors"
	"os"
	"path"
	"path/filepath"
	"slices"
)

// bundleDirs are the directories of a bundle that Generate fills, and the only ones Write and Check look at.
var bundleDirs = []string{"manifests", "metadata"}

// Write writes files into dir, creating its directories, and removes the files an earlier run generated there
// and this one did not (a kind renamed or removed). It returns the paths of other files it leaves, which OLM
// would take as part of the bundle although nothing generated them.
func Write(dir string, files []File) ([]string, error) {
	for _, f := range files {
		name := filepath.Join(dir, filepath.FromSlash(f.Path))
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(name, f.Data, 0o644); err != nil {
			return nil, err
		}
	}
	extra, err := extras(dir, files)
	if err != nil {
		return nil, err
	}
	var kept []string
	for _, p := range extra {
		name := filepath.Join(dir, filepath.FromSlash(p))
		info, err := os.Stat(name)
		if err != nil {
			return nil, err
		}
		var data []byte
		if !info.IsDir() {
			if data, err = os.ReadFile(name); err != nil {
				return nil, err
			}
		}
		if !bytes.HasPrefix(data, []byte(generatedMarker)) {
			kept = append(kept, p)
			continue
		}
		if err := os.Remove(name); err != nil {
			return nil, err
		}
	}
	return kept, nil
}

// Check compares files with dir and describes each file that is missing, stale (other bytes) or extra (in a
// directory of the bundle but not generated); none means dir is up to date.
func Check(dir string, files []File) ([]string, error) {
	var problems []string
	for _, f := range files {
		name := filepath.Join(dir, filepath.FromSlash(f.Path))
		data, err := os.ReadFile(name)
		switch {
		case errors.Is(err, os.ErrNotExist):
			problems = append(problems, "missing: "+name)
		case err != nil:
			return nil, err
		case !bytes.Equal(data, f.Data):
			problems = append(problems, "stale: "+name)
		}
	}
	extra, err := extras(dir, files)
	if err != nil {
		return nil, err
	}
	for _, p := range extra {
		problems = append(problems, "extra: "+filepath.Join(dir, filepath.FromSlash(p))+" (the bundle does not generate it)")
	}
	return problems, nil
}

// extras lists the files of dir's bundle directories that are not among files, as paths like File.Path.
func extras(dir string, files []File) ([]string, error) {
	var out []string
	for _, sub := range bundleDirs {
		entries, err := os.ReadDir(filepath.Join(dir, sub))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			p := path.Join(sub, e.Name())
			if !slices.ContainsFunc(files, func(f File) bool { return f.Path == p }) {
				out = append(out, p)
			}
		}
	}
	return out, nil
}
