// Package compact shares the short strings that every object of a kind
// repeats among the objects of the storage cache (Transform), its managed
// fields dropped. It never changes a value. The other caches hold objects as
// the API server sends them, less what no reader reads.
package compact
