package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/rudder-operator/rudder/internal/helm"
	"github.com/rudder-operator/rudder/internal/preview"
)

const diffUsage = `Usage: rudder diff -f FILE [-n NAMESPACE] [-o text|json] [--default-service-account NAME] [--kubeconfig FILE]
  Show what applying the custom resources of FILE (- for standard input; YAML or JSON, several documents)
  would do to their releases, changing nothing: each resource's chart is rendered with its new spec as rudder
  would (overrideValues, valuesFrom, hooks' values), each object is applied in a server-side dry run, and the
  result is compared with the live object, without status, metadata noise and fields other managers own.
  Secret data, and values taken from Secrets, are masked. Reads and dry runs act as the ServiceAccount of a
  resource's rudder.dev/service-account annotation (--default-service-account for those without), else as you.
  Exit status: 0 no difference, 1 differences, 2 or more an error (as kubectl diff).`

// ExitError ends the command line with Code, printing Err when not nil.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

// errDiffers is the exit of a diff that found differences.
var errDiffers = &ExitError{Code: 1}

// diffOptions are the flags of `rudder diff`.
type diffOptions struct {
	// file holds the resources; "-" is standard input. Required.
	file string
	// namespace holds the resources that name none. Default: the kubeconfig context's, else "default".
	namespace string
	// output is text or json. Default "text".
	output string
	// defaultServiceAccount is the manager's --default-service-account. Default "": as you.
	defaultServiceAccount string
	// kubeconfig is the kubeconfig file. Default: as kubectl finds it.
	kubeconfig string
}

// runDiff runs `rudder diff` with args (after the command name), reading
// "-" from in. Its error is an *ExitError: 1 when the resources differ, 2 on
// a failure.
func runDiff(ctx context.Context, args []string, in io.Reader, out io.Writer, config *rest.Config) error {
	if err := diff(ctx, args, in, out, config); err != nil {
		if errors.Is(err, errDiffers) {
			return err
		}
		return &ExitError{Code: 2, Err: err}
	}
	return nil
}

func diff(ctx context.Context, args []string, in io.Reader, out io.Writer, config *rest.Config) error {
	fs := flag.NewFlagSet("rudder diff", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var o diffOptions
	fs.StringVar(&o.file, "f", "", "file of resources, - for standard input")
	fs.StringVar(&o.file, "filename", "", "file of resources, - for standard input")
	fs.StringVar(&o.namespace, "n", "", "namespace")
	fs.StringVar(&o.namespace, "namespace", "", "namespace")
	fs.StringVar(&o.output, "o", "text", "text or json")
	fs.StringVar(&o.output, "output", "text", "text or json")
	fs.StringVar(&o.defaultServiceAccount, "default-service-account", "", "the manager's --default-service-account")
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig file")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w\n%s", err, diffUsage)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q\n%s", fs.Arg(0), diffUsage)
	}
	if o.file == "" {
		return fmt.Errorf("flag -f: name the file of resources, or - for standard input\n%s", diffUsage)
	}
	if o.output != "text" && o.output != "json" {
		return fmt.Errorf("flag -o: %q is not an output format; use text or json", o.output)
	}
	objs, err := readResources(o.file, in)
	if err != nil {
		return err
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = o.kubeconfig
	loader := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{})
	if config == nil {
		if config, err = loader.ClientConfig(); err != nil {
			return fmt.Errorf("reading the kubeconfig: %w", err)
		}
	}
	if o.namespace == "" {
		o.namespace, _, _ = loader.Namespace()
	}
	report, err := preview.Diff(ctx, preview.Options{Config: config, Namespace: o.namespace, DefaultServiceAccount: o.defaultServiceAccount}, objs)
	if err != nil {
		return err
	}
	if o.output == "json" {
		err = report.WriteJSON(out)
	} else {
		err = report.WriteText(out)
	}
	if err != nil {
		return err
	}
	if report.Differs() {
		return errDiffers
	}
	return nil
}

// readResources reads the resources of file, "-" for in.
func readResources(file string, in io.Reader) ([]*unstructured.Unstructured, error) {
	var data []byte
	var err error
	if file == "-" {
		data, err = io.ReadAll(in)
	} else {
		data, err = os.ReadFile(file)
	}
	if err != nil {
		return nil, fmt.Errorf("flag -f: %w", err)
	}
	objs, err := helm.ParseManifest(string(data))
	if err != nil {
		return nil, fmt.Errorf("flag -f: %s: %w", file, err)
	}
	if len(objs) == 0 {
		return nil, fmt.Errorf("flag -f: %s holds no resource", file)
	}
	for i, obj := range objs {
		if obj.GetKind() == "" || obj.GetAPIVersion() == "" || obj.GetName() == "" {
			return nil, fmt.Errorf("flag -f: %s: document %d lacks apiVersion, kind or metadata.name", file, i+1)
		}
	}
	return objs, nil
}
