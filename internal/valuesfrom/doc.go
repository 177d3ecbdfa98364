// Package valuesfrom reads release values from keys of ConfigMaps and Secrets
// in a custom resource's namespace, with the semantics of Flux's HelmRelease
// valuesFrom: sources are merged in order, each over the ones before it, and
// the resource's spec over them all. They are declared per kind in
// watches.yaml (valuesFrom) and per resource in the annotation
// rudder.dev/values-from, a YAML list of sources:
//
//	rudder.dev/values-from: |
//	  - kind: ConfigMap
//	    name: shared-values
//	  - kind: Secret
//	    name: db-password
//	    valuesKey: password
//	    targetPath: config.DB_PASSWORD
//
// What a Secret holds never appears in an error, and the digest of values
// that include it (see Values.Shadow) is computed without it.
// It must never import the reconcile, manager, cli, admission or preview
// packages.
package valuesfrom
