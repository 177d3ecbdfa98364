// Package compact makes what rudder's caches hold of an object smaller: the
// managed fields dropped, the short strings that every object of a kind
// repeats shared among them, and custom resources kept as deflated JSON
// (Encoded). It never changes a value.
package compact
