package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// Options are what the command line runs with.
type Options struct {
	// Name is how the user called rudder, as its help and errors show it:
	// "rudder", or "kubectl rudder" as a kubectl plugin (see Invocation).
	// Default "rudder".
	Name string
	// IO are the standard streams. Default: os.Stdin, os.Stdout and os.Stderr
	// for the ones left nil.
	IO genericiooptions.IOStreams
}

// withDefaults returns o with its defaults filled in.
func (o Options) withDefaults() Options {
	if o.Name == "" {
		o.Name = "rudder"
	}
	if o.IO.In == nil {
		o.IO.In = os.Stdin
	}
	if o.IO.Out == nil {
		o.IO.Out = os.Stdout
	}
	if o.IO.ErrOut == nil {
		o.IO.ErrOut = os.Stderr
	}
	return o
}

// Invocation returns the name to show and the arguments to run for a
// program called as argv: "kubectl rudder" when kubectl runs it as the
// plugin kubectl-rudder, else "rudder". Called as kubectl_complete-rudder,
// which kubectl (1.26 and later) runs to complete `kubectl rudder ...`, it
// answers cobra's completion request.
func Invocation(argv []string) (name string, args []string) {
	if len(argv) == 0 {
		return "rudder", nil
	}
	base := strings.TrimSuffix(filepath.Base(argv[0]), ".exe")
	args = argv[1:]
	if plugin, ok := strings.CutPrefix(base, "kubectl_complete-"); ok && plugin != "" {
		return "kubectl " + plugin, append([]string{cobra.ShellCompRequestCmd}, args...)
	}
	if plugin, ok := strings.CutPrefix(base, "kubectl-"); ok && plugin != "" {
		// kubectl maps a dash of the command to an underscore of the file.
		return "kubectl " + strings.ReplaceAll(plugin, "_", "-"), args
	}
	return "rudder", args
}

// ExitError is an error that asks for a process exit code other than 1,
// as `kubectl diff` exits 1 for differences and 2 or more for errors. Err,
// when not nil, is printed.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit code %d", e.Code)
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

// Main runs the command line args (without the program name) and returns the
// process exit code, having printed an error, if any, to o.IO.ErrOut.
func Main(ctx context.Context, args []string, o Options) int {
	o = o.withDefaults()
	return exitCode(Run(ctx, args, o), o.IO.ErrOut, o.Name)
}

// exitCode returns the exit code of err (0 for nil, an ExitError's code, else
// 1) and prints it, after name, to errOut.
func exitCode(err error, errOut io.Writer, name string) int {
	if err == nil {
		return 0
	}
	code := 1
	if exit := (*ExitError)(nil); errors.As(err, &exit) {
		code = exit.Code
		if exit.Err == nil { // the command said what it had to
			return code
		}
	}
	_, _ = fmt.Fprintf(errOut, "%s: %v\n", name, err)
	return code
}

// Run runs the command line args (without the program name).
func Run(ctx context.Context, args []string, o Options) error {
	cmd := NewCommand(o)
	cmd.SetArgs(args)
	return cmd.ExecuteContext(ctx)
}

// env is what every command is built with: how rudder was called, its
// streams, and kubectl's flags (--kubeconfig, --context, -n, --as, ...),
// which say how to reach the cluster.
type env struct {
	name  string
	io    genericiooptions.IOStreams
	flags *genericclioptions.ConfigFlags
}

// NewCommand returns the command tree of rudder. To add a command, write
// newXCommand(e *env) *cobra.Command in a file of its own and list it here.
func NewCommand(o Options) *cobra.Command {
	o = o.withDefaults()
	e := &env{name: o.Name, io: o.IO, flags: genericclioptions.NewConfigFlags(true)}
	root := &cobra.Command{
		Use:   "rudder",
		Short: "Operate the resources rudder serves: their Helm releases, reconciles, chart tests and RBAC",
		Long: `rudder is the command line of the rudder operator: for people on call (history, rollback,
reconcile, test, diff), with the meaning of helm history, helm rollback, helm test and helm-diff, and for platform
teams (rbac, shard-of, manifests, bundle). Installed as kubectl-rudder on PATH, it is the kubectl
plugin "kubectl rudder", with the same commands and flags.

The kubectl flags (--kubeconfig, --context, --cluster, -n/--namespace, --as, --as-group,
--request-timeout, ...) mean what they mean to kubectl.`,
		Example: e.examples(`  # The revisions of a WebApp's release, then a rollback to the one before the deployed one
  rudder history webapp/my-webapp -n shop
  rudder rollback webapp/my-webapp -n shop --wait 2m

  # The Role a tenant namespace's account needs for rudder to serve WebApps there
  rudder rbac webapp -n team-a | kubectl apply -f -`),
		Annotations:   map[string]string{cobra.CommandDisplayNameAnnotation: o.Name},
		SilenceErrors: true, // Main prints them, once
		SilenceUsage:  true, // an error is not a reason to print the whole help
	}
	root.SetIn(o.IO.In)
	root.SetOut(o.IO.Out)
	root.SetErr(o.IO.ErrOut)
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return fmt.Errorf("%w\nSee '%s --help' for usage", err, cmd.CommandPath())
	})
	e.flags.AddFlags(root.PersistentFlags())

	root.AddCommand(
		newHistoryCommand(e),
		newRollbackCommand(e),
		newRolloutCommand(e),
		newDiffCommand(e),
		newReconcileCommand(e),
		newTestCommand(e),
		newRBACCommand(e),
		newShardOfCommand(e),
		newManifestsCommand(e),
		newBundleCommand(e),
	)
	// Execute would add these; adding them now makes the tree whole for
	// whoever walks it (the tests).
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	return root
}

var exampleCommand = regexp.MustCompile(`(?m)^(\s*)rudder `)

// examples returns text, examples written for `rudder`, with the name rudder
// was called by (`kubectl rudder` as a plugin).
func (e *env) examples(text string) string {
	return exampleCommand.ReplaceAllString(text, "${1}"+strings.ReplaceAll(e.name, "$", "$$")+" ")
}

// noArgs is the cobra.PositionalArgs of the commands that take only flags.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return fmt.Errorf("unexpected argument %q: %s takes only flags; see '%s --help'", args[0], cmd.Name(), cmd.CommandPath())
	}
	return nil
}
