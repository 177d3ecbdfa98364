package reconcile

import (
	"bytes"
	"compress/flate"
	"io"
	"sync"
)

// A kept revision's objects are held deflated between reconciles (decoded),
// at flate's fastest level: each reconcile of the release inflates them.
// Writers and readers are pooled.
var (
	deflaters = sync.Pool{New: func() any {
		w, _ := flate.NewWriter(nil, flate.BestSpeed) // a valid level: no error
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
