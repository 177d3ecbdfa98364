// Package compact makes what rudder's caches hold of an object smaller: the
// managed fields dropped, and the short strings that every object of a kind
// repeats shared among them. It never changes a value.
package compact
