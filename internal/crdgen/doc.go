// Package crdgen generates the CustomResourceDefinition of each kind of a
// watches file from its chart (`rudder manifests`, `make manifests`). It owns
// the chart convention below; it reads charts and writes files, and must not
// talk to a cluster.
//
// spec is the chart's values.schema.json (JSON Schema draft-07) made
// structural: local $ref inlined, ["T", "null"] as nullable, integer-or-string
// as x-kubernetes-int-or-string, const as a one-value enum, uniqueItems of
// scalars as x-kubernetes-list-type: set, and the x-kubernetes-* extensions
// (CEL rules in x-kubernetes-validations) passed on. Keywords listed in a
// schema's x-rudder-helm-only stay Helm's alone. A chart without a schema gets
// a spec that keeps any field, and a warning. status is what rudder's
// reconciler writes, plus what each hook declares (hook.StatusSchemer).
//
// Chart.yaml annotations, each optional:
//
//   - rudder.dev/plural, rudder.dev/singular: resource names (default: the
//     lower-case kind and its English plural).
//   - rudder.dev/short-names: comma-separated short names.
//   - rudder.dev/categories: comma-separated categories (default "rudder").
//   - rudder.dev/printer-columns: YAML list of {name, type, jsonPath,
//     description, priority, format}; Age is appended unless declared.
//   - rudder.dev/scale: YAML {specReplicasPath, statusReplicasPath,
//     labelSelectorPath}: the scale subresource.
//   - rudder.dev/crd-annotations: YAML map of the CRD's own annotations;
//     api-approved.kubernetes.io is required for a group under k8s.io or
//     kubernetes.io.
//   - rudder.dev/status-schema: YAML map of status key to JSON Schema, for
//     status the chart's kind has beyond rudder's and its hooks'.
//   - rudder.dev/validations: YAML list of CEL rules on the whole resource
//     (self.metadata and self.spec), as x-kubernetes-validations takes them.
//   - rudder.dev/name-schema: JSON Schema of metadata.name, such as a
//     maxLength and CEL rules.
//
// docs/chart-conventions.md explains each with examples.
// It must never import controller-runtime or client-go, nor the reconcile,
// manager, cli, admission or preview packages.
package crdgen
