package cli

import (
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// completeResource completes the <kind>/<name> argument of a command: the
// kinds built into rudder as "kind/", then, once a kind is typed, the names
// of that kind in the namespace of kubectl's flags, read from the cluster.
// (`rudder completion` makes the shell scripts that call it.)
func (e *env) completeResource(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	switch {
	case len(args) == 0 && strings.Contains(toComplete, "/"):
		kind, _, _ := strings.Cut(toComplete, "/")
		return e.names(cmd, kind, kind+"/"), cobra.ShellCompDirectiveNoFileComp
	case len(args) == 0:
		ws, err := loadWatches("")
		if err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		var kinds []string
		for _, w := range ws {
			kinds = append(kinds, strings.ToLower(w.GVK.Kind)+"/")
		}
		return kinds, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
	case len(args) == 1 && !strings.Contains(args[0], "/"):
		return e.names(cmd, args[0], ""), cobra.ShellCompDirectiveNoFileComp
	}
	return nil, cobra.ShellCompDirectiveNoFileComp
}

// names returns the names of the resources of kind in the namespace, each
// after prefix; none when the cluster does not answer.
func (e *env) names(cmd *cobra.Command, kind, prefix string) []string {
	c, err := e.connect()
	if err != nil {
		return nil
	}
	gvr, err := c.mapper.ResourceFor(schema.ParseGroupResource(strings.ToLower(kind)).WithVersion(""))
	if err != nil {
		return nil
	}
	gvk, err := c.mapper.KindFor(gvr)
	if err != nil {
		return nil
	}
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	if err := c.client.List(cmd.Context(), list, client.InNamespace(c.namespace)); err != nil {
		return nil
	}
	names := make([]string, 0, len(list.Items))
	for _, item := range list.Items {
		names = append(names, prefix+item.GetName())
	}
	return names
}
