// Package compact makes what rudder's caches hold of an object smaller: the
// managed fields dropped, the short strings that every object of a kind
// repeats shared among them, and each object kept as its metadata plus the
// rest encoded (Encoded). It never changes a value.
package compact
