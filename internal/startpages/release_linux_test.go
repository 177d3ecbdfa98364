package startpages

import (
	"errors"
	"testing"
)

// The test binary, like rudder's, has run the init of every package it links:
// paged out, its resident file pages shrink, and the test goes on running on
// the pages it faults back in.
func TestRelease_ShrinksTheResidentPagesOfTheBinary(t *testing.T) {
	before, after, err := Release()
	if errors.Is(err, ErrUnsupported) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if before <= 0 || after >= before {
		t.Errorf("resident file pages: %d bytes before, %d after; want fewer after", before, after)
	}
	t.Logf("resident file pages: %d KiB before, %d KiB after", before>>10, after>>10)
}
