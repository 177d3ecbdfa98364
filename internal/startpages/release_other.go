//go:build !linux

package startpages

// Release does nothing but say so: only Linux pages out on request.
func Release() (before, after int64, err error) { return 0, 0, ErrUnsupported }
