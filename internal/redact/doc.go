// Package redact removes the values a reconcile read from Secrets from the
// messages it writes: a condition, an Event, a log line. An error of the
// values schema or of the API server may quote a value rudder put in a
// release's values, whichever Secret it came from.
//
// It must not decide which values are secret: its caller says.
// It must never import controller-runtime, client-go, Helm or package helm, nor
// the reconcile, manager, cli, admission or preview packages.
package redact
