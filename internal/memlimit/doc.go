// Package memlimit gives Go a soft memory limit below the container's, so
// that near the limit the garbage collector works harder instead of the
// kernel killing the process.
package memlimit
