// Package dropin proves that charts written without rudder in mind serve as
// kinds by a watches.yaml entry and the CRDs `rudder manifests` generates: a
// single chart whose values.schema.json makes a validating CRD (charts/cache)
// and an umbrella chart with a subchart and a library dependency and no
// schema, so an open spec (charts/guestbook), each run by a real rudder
// manager against envtest.
// It must never import package reconcile: it drives rudder through its manager
// and command line.
package dropin
