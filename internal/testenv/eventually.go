package testenv

import (
	"testing"
	"time"
)

// Eventually retries check until it returns nil, failing t with its last
// error after a minute: generous for a slow shared machine.
func Eventually(t testing.TB, what string, check func() error) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
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
