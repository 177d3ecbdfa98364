package cli

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/rudder-operator/rudder/internal/helm"
	"github.com/rudder-operator/rudder/internal/preview"
)

// diffOptions are the flags of `rudder diff`.
type diffOptions struct {
	// file holds the resources; "-" is standard input. Required.
	file string
	// output is "" (text) or json. Default "".
	output string
	// defaultServiceAccount is the manager's --default-service-account.
	// Default "": as you.
	defaultServiceAccount string
}

// errDiffers is the exit of a diff that found differences: it printed
// them, and exits 1 as kubectl diff does.
var errDiffers = &ExitError{Code: 1}

func newDiffCommand(e *env) *cobra.Command {
	var o diffOptions
	cmd := &cobra.Command{
		Use:   "diff -f FILE",
		Short: "Show what applying custom resources would change in their releases, changing nothing",
		Long: `Show what applying the custom resources of FILE (- for standard input; YAML or JSON, several
documents) would do to their releases, changing nothing: each resource's chart is rendered with its
new spec as rudder would (overrideValues, valuesFrom, hooks' values), each object is applied in a
server-side dry run, and the result is compared with the live object, without status, metadata noise
and fields other managers own. Secret data, and values taken from Secrets, are masked. Reads and dry
runs act as the ServiceAccount of a resource's rudder.dev/service-account annotation
(--default-service-account for those without), else as you.

Exit status, as kubectl diff's: 0 no difference, 1 differences, 2 an error.`,
		Example: e.examples(`  # What a changed WebApp would do to its release
  rudder diff -f webapp.yaml

  # From standard input, as data
  kubectl get webapp my-webapp -o yaml | sed 's/nginx:1.25/nginx:1.26/' | rudder diff -f - -o json`),
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := e.diff(cmd, o); err != nil && !errors.Is(err, errDiffers) {
				return &ExitError{Code: 2, Err: err}
			} else if err != nil {
				return err
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&o.file, "filename", "f", "", "the file of resources, - for standard input")
	_ = cmd.MarkFlagFilename("filename", "yaml", "yml", "json")
	outputFlag(cmd, &o.output, "", "json (default: text)", "json")
	cmd.Flags().StringVar(&o.defaultServiceAccount, "default-service-account", "",
		"the account the manager acts as for a resource without rudder.dev/service-account (its --default-service-account)")
	return cmd
}

// diff runs `rudder diff`; its error is errDiffers when the resources differ.
func (e *env) diff(cmd *cobra.Command, o diffOptions) error {
	if o.file == "" {
		return errors.New("flag -f: name the file of resources, or - for standard input")
	}
	if err := checkOutput(o.output, "", "json"); err != nil {
		return err
	}
	objs, err := readResources(o.file, e.io.In)
	if err != nil {
		return err
	}
	config, err := e.restConfig()
	if err != nil {
		return err
	}
	ns, err := e.namespace()
	if err != nil {
		return err
	}
	report, err := preview.Diff(cmd.Context(), preview.Options{Config: config, Namespace: ns, DefaultServiceAccount: o.defaultServiceAccount}, objs)
	if err != nil {
		return err
	}
	if o.output == "json" {
		err = report.WriteJSON(e.io.Out)
	} else {
		err = report.WriteText(e.io.Out)
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
