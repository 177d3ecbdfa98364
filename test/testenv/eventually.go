package testenv

import (
	"testing"
	"time"
)

// Eventually retries check until it returns nil, failing t with its last
// error after a minute: generous for a slow shared machine.
func Eventually(t testing.TB, what string, check func() error) {
	t.Helper()
	EventuallyWithin(t, time.Minute, what, check)
}

// EventuallyWithin is Eventually with a deadline of its own, for waits that
// grow with the work (a thousand releases, say).
func EventuallyWithin(t testing.TB, d time.Duration, what string, check func() error) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
