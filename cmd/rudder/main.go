// Command rudder is the command line for people on call (`rudder history`,
// `rudder rollback`, ...) and for platform teams (`rudder rbac`, the Role a
// tenant namespace's account needs). Installed as kubectl-rudder on PATH, it
// is also the kubectl plugin `kubectl rudder`, which its help then names;
// installed as kubectl_complete-rudder too, it completes that plugin's
// command lines in kubectl's shell completion.
package main

import (
	"context"
	"os"
	"os/signal"

	"github.com/rudder-operator/rudder/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	name, args := cli.Invocation(os.Args)
	code := cli.Main(ctx, args, cli.Options{Name: name})
	stop()
	os.Exit(code)
}
