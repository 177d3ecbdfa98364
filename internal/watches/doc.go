// Package watches loads and validates a watches file: the YAML list that maps each custom-resource kind to the
// Helm chart serving it, in the operator-sdk format plus rudder's own fields. It owns parsing, defaults, the
// load-time checks of every entry and chart, and the release name of a custom resource. It must not talk to the
// cluster or run Helm actions; it only reads files.
package watches
