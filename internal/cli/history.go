package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/rudder-operator/rudder/internal/helm"
)

// historyOptions are the flags of `rudder history`.
type historyOptions struct {
	// output is "" (a table), json or yaml. Default "".
	output string
}

func newHistoryCommand(e *env) *cobra.Command {
	var o historyOptions
	cmd := &cobra.Command{
		Use:   "history <kind>/<name>",
		Short: "Show the revisions of a resource's release, newest first (helm history)",
		Long: `Show the revisions of the Helm release of a resource rudder serves, newest first, as helm history
does: revision, time, status, chart, app version and description. -o json or yaml prints the same
as data, with helm history's field names.`,
		Example: e.examples(`  # The revisions of WebApp my-webapp in the current namespace
  rudder history webapp/my-webapp

  # As JSON, in namespace shop of the kubeconfig context prod
  rudder history webapp/my-webapp -n shop --context prod -o json`),
		Args:              resourceArgs,
		ValidArgsFunction: e.completeResource,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(o.output, "", "json", "yaml"); err != nil {
				return err
			}
			c, obj, err := e.resource(cmd.Context(), args)
			if err != nil {
				return err
			}
			revs, err := c.history(obj)
			if err != nil {
				return err
			}
			return printHistory(e.io.Out, revs, o.output)
		},
	}
	outputFlag(cmd, &o.output, "", "json or yaml (default: a table)", "json", "yaml")
	return cmd
}

// history returns the revisions of obj's release, newest first.
func (c *conn) history(obj *unstructured.Unstructured) ([]*helm.Release, error) {
	release := strings.ToLower(obj.GetKind()) + "-" + obj.GetName()
	if r, found, _ := unstructured.NestedString(obj.Object, "status", "release", "name"); found && r != "" {
		release = r
	}
	return c.helm.History(obj.GetNamespace(), release, obj.GetUID())
}

// revision is a row of the history as data, with helm history's field names.
type revision struct {
	Revision    int       `json:"revision"`
	Updated     time.Time `json:"updated"`
	Status      string    `json:"status"`
	Chart       string    `json:"chart"`
	AppVersion  string    `json:"app_version"`
	Description string    `json:"description"`
}

// printHistory prints revs as a table, or as json or yaml.
func printHistory(out io.Writer, revs []*helm.Release, output string) error {
	if output != "" {
		rows := make([]revision, 0, len(revs))
		for _, r := range revs {
			rows = append(rows, revision{Revision: r.Revision, Updated: r.Updated, Status: r.Status,
				Chart: r.Chart + "-" + r.ChartVersion, AppVersion: r.AppVersion, Description: r.Description})
		}
		return printData(out, rows, output)
	}
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	p := &printer{w: w}
	p.printf("REVISION\tUPDATED\tSTATUS\tCHART\tAPP VERSION\tDESCRIPTION\n")
	for _, r := range revs {
		p.printf("%d\t%s\t%s\t%s-%s\t%s\t%s\n", r.Revision, r.Updated.Format(time.ANSIC), r.Status, r.Chart, r.ChartVersion, r.AppVersion, r.Description)
	}
	if p.err != nil {
		return p.err
	}
	return w.Flush()
}

// outputFlag adds -o/--output to cmd, completing the formats.
func outputFlag(cmd *cobra.Command, output *string, def, usage string, formats ...string) {
	cmd.Flags().StringVarP(output, "output", "o", def, "output format: "+usage)
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(formats, cobra.ShellCompDirectiveNoFileComp))
}

// checkOutput returns an error naming -o when output is not one of formats
// ("" for the table).
func checkOutput(output string, formats ...string) error {
	var named []string
	for _, f := range formats {
		if output == f {
			return nil
		}
		if f != "" {
			named = append(named, f)
		}
	}
	fix := "use " + strings.Join(named, " or ")
	if len(named) < len(formats) {
		fix += ", or leave -o out for a table"
	}
	return fmt.Errorf("flag -o: %q is not an output format; %s", output, fix)
}

// printData prints v as indented JSON or as YAML.
func printData(out io.Writer, v any, output string) error {
	var data []byte
	var err error
	if output == "json" {
		data, err = json.MarshalIndent(v, "", "  ")
		data = append(data, '\n')
	} else {
		data, err = yaml.Marshal(v)
	}
	if err != nil {
		return err
	}
	_, err = out.Write(data)
	return err
}
