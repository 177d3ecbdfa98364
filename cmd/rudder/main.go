// Command rudder is the command line for people on call (`rudder history`,
// `rudder rollback`, ...) and for platform teams (`rudder rbac`, the Role a
// tenant namespace's account needs). Installed as kubectl-rudder on PATH, it
// is also the kubectl plugin `kubectl rudder`.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/rudder-operator/rudder/internal/cli"
)

func main() {
	if err := cli.Run(context.Background(), os.Args[1:], os.Stdout, nil); err != nil {
		fmt.Fprintln(os.Stderr, "rudder:", err)
		os.Exit(1)
	}
}
