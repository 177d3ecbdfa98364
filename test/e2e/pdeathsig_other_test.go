//go:build e2e && !linux

package e2e

import "os/exec"

// setParentDeathSignal does nothing outside Linux: a test binary killed by
// `go test -timeout` leaves the manager running there.
func setParentDeathSignal(*exec.Cmd) {}
