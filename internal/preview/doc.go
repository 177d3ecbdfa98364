// Package preview computes what applying a changed custom resource would do
// to its release, without changing anything: `rudder diff`. For each
// resource it computes the release values as the reconciler does (the kind's
// overrideValues, valuesFrom sources, hooks' values), has Helm render the
// revision an install or upgrade would make (a server dry run), asks the API
// server for a server-side dry-run apply of each object, and compares it
// with the live object. Everything it reads or dry-runs, it does as the
// identity the reconciler would act as for that resource, or as the caller.
// It must never write, and never show a Secret's value: Secret data is masked,
// and so are values taken from Secrets wherever a chart puts them. It compares
// the fields the dry-run apply would own: a field the new revision stops
// rendering is not seen.
// It must never import package cli or package admission, which build on it.
package preview
