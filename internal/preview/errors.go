package preview

// RenderError is returned, wrapped, when Helm cannot render a resource's
// chart with its values: the spec cannot succeed as it is.
type RenderError struct{ Err error }

func (e *RenderError) Error() string { return e.Err.Error() }
func (e *RenderError) Unwrap() error { return e.Err }

// RefusedError is returned, wrapped, when the API server refuses the
// server-side dry run of an object of a resource's release: Err is the API
// server's answer, which names the object and the field.
type RefusedError struct{ Err error }

func (e *RefusedError) Error() string { return e.Err.Error() }
func (e *RefusedError) Unwrap() error { return e.Err }
