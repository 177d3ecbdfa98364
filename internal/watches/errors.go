package watches

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ErrNoKinds is returned, wrapped, by Load and LoadFile when the watches file lists no entry.
var ErrNoKinds = errors.New("no kinds")

// EntryError is a problem with one entry of a watches file. Load and LoadFile report every problem they find,
// joined with errors.Join; use errors.As to get at the first, or walk the join for all of them.
type EntryError struct {
	// File is the watches file as named to Load or LoadFile.
	File string
	// Entry is the position of the entry in the file, counting from 1.
	Entry int
	// GVK is the entry's group, version and kind as written, possibly incomplete or invalid.
	GVK schema.GroupVersionKind
	// Field is the field at fault, such as "reconcilePeriod", "overrideValues.image" or "hooks[1]";
	// empty when the entry as a whole is wrong.
	Field string
	// Problem says what is wrong and how to fix it.
	Problem string
	// Err is the underlying error, if any.
	Err error
}

// Error says which entry and field are wrong, what is wrong and how to fix it.
func (e *EntryError) Error() string {
	id := "no group, version or kind"
	if !e.GVK.Empty() {
		id = e.GVK.String()
	}
	s := fmt.Sprintf("%s entry %d (%s)", e.File, e.Entry, id)
	if e.Field != "" {
		s += fmt.Sprintf(": field %q", e.Field)
	}
	return s + ": " + e.Problem
}

// Unwrap returns the underlying error.
func (e *EntryError) Unwrap() error { return e.Err }
