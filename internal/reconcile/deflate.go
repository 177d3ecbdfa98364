package reconcile

import (
	"bytes"
	"compress/flate"
	"io"
	"sync"
)

// The objects of a kept revision are deflated: a release's Deployment and
// Service are about 3.4 KB of JSON and 1 KB deflated, held for every
// release between its reconciles. Writers (about 600 KB each) and readers
// (about 40 KB) are pooled: a reconcile inflates the revision it reads.
var (
	deflaters = sync.Pool{New: func() any {
		w, _ := flate.NewWriter(nil, flate.DefaultCompression) // a valid level: no error
		return w
	}}
	inflaters sync.Pool
)

// deflate compresses b.
func deflate(b []byte) ([]byte, error) {
	var out bytes.Buffer
	w, _ := deflaters.Get().(*flate.Writer)
	defer deflaters.Put(w)
	w.Reset(&out)
	if _, err := w.Write(b); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return bytes.Clone(out.Bytes()), nil
}

// inflate decompresses what deflate compressed.
func inflate(b []byte) ([]byte, error) {
	src := bytes.NewReader(b)
	r, ok := inflaters.Get().(io.ReadCloser)
	if ok {
		if err := r.(flate.Resetter).Reset(src, nil); err != nil {
			return nil, err
		}
	} else {
		r = flate.NewReader(src)
	}
	defer inflaters.Put(r)
	out, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	return out, r.Close()
}
