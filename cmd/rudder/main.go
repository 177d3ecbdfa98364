// Command rudder is the command line for people on call (`rudder history`,
// `rudder rollback`, ...) and for platform teams (`rudder rbac`, the Role a
// tenant namespace's account needs). Installed as kubectl-rudder on PATH, it
// is also the kubectl plugin `kubectl rudder`.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/rudder-operator/rudder/internal/cli"
)

func main() {
	err := cli.Run(context.Background(), os.Args[1:], os.Stdout, nil)
	if err == nil {
		return
	}
	code := 1
	var exit *cli.ExitError
	if errors.As(err, &exit) {
		code, err = exit.Code, exit.Err
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "rudder:", err)
	}
	os.Exit(code)
}
