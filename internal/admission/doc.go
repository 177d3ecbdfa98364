// Package admission is rudder's validating admission webhook: for a create or
// update of a custom resource of a kind rudder serves, it renders the chart
// with the new spec and server-side dry-runs the release's objects (package
// preview), as the identity the reconciler would act as, and refuses a spec
// that cannot render or whose objects the API server would refuse, with the
// template error or the API server's reason. It writes nothing: hooks run
// against a dry-run client, and it never shows a Secret's value. A preview
// that outlasts the budget is allowed with a warning; the configuration's
// failurePolicy Ignore keeps a stopped manager from blocking the API. Its
// serving certificate is made, rotated and injected into the configuration by
// open-policy-agent/cert-controller, so no cert-manager is needed. The
// manager adds it through manager.Options.Webhook (cmd/manager passes
// Options.Setup): package preview imports package manager, which therefore
// cannot import this one.
// It must never import package cli or Helm's action package; only cmd/manager
// imports it.
package admission
