// Package hook defines the Go hooks a kind enables by name in watches.yaml:
// small pieces of reconcile a chart cannot express (a generated password
// Secret, a backup schedule), each owning exactly one condition type. It holds
// the interface, the registry and the readers of release values the hooks
// share (String, Bool, Int, Quantity: a wrong value is a FieldError naming the
// spec field), and the records by which a hook knows its own objects
// (OwnerReference, AnnotationGeneratedFor: a hook acts on nothing else), and
// the optional interfaces by which a hook says more (Gate, Permissioner,
// StatusSchemer, Watcher: the kinds of objects whose changes concern it), not
// the hooks themselves.
// It must never import a hook (internal/hook/...), Helm or package helm, nor
// the reconcile, manager, cli, admission or preview packages.
package hook
