// Package watches loads and validates a watches file: the YAML list that maps each custom-resource kind to the
// Helm chart serving it, in the operator-sdk format plus rudder's own fields. It owns parsing, defaults, the
// load-time checks of every entry and chart, and the release name of a custom resource. It only reads files: it
// must never import controller-runtime, client-go or Helm's action package, nor the reconcile, manager, cli,
// admission or preview packages.
package watches
