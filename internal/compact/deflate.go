package compact

import (
	"bytes"
	"compress/flate"
	"io"
	"sync"
)

// What rudder keeps as JSON between its reads is deflated: the objects of a
// kept revision (a release's Deployment and Service, 1,369 bytes of JSON
// kept as 524) and the custom resources of the caches (Encoded). At the
// fastest level: the default kept the same objects in 499 bytes and took half
// as long again to encode a WebApp, which every status write makes the cache
// do. Writers and readers are pooled: every read inflates.
var (
	deflaters = sync.Pool{New: func() any {
		w, _ := flate.NewWriter(nil, flate.BestSpeed) // a valid level: no error
		return w
	}}
	inflaters sync.Pool
)

// Deflate compresses b.
func Deflate(b []byte) ([]byte, error) {
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

// Inflate decompresses what Deflate compressed.
func Inflate(b []byte) ([]byte, error) {
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
