// Command rudder is the command line for people on call (`rudder history`,
// `rudder rollback`, ...) and for platform teams (`rudder rbac`, the Role a
// tenant namespace's account needs). Installed as kubectl-rudder on PATH, it
// is also the kubectl plugin `kubectl rudder`, which its help then names.
package main

import (
	"context"
	"os"
	"os/signal"

	"github.com/rudder-operator/rudder/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := cli.Main(ctx, os.Args[1:], cli.Options{Name: cli.NameOf(os.Args[0])})
	stop()
	os.Exit(code)
}
