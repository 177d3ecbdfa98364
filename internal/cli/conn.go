package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/rudder-operator/rudder/internal/helm"
)

// conn is a connection to the cluster kubectl's flags name, in the
// namespace they name.
type conn struct {
	client    client.Client
	mapper    meta.RESTMapper
	helm      *helm.Getter
	namespace string
}

// restConfig returns the client configuration kubectl's flags make
// (--kubeconfig, --context, --as, --request-timeout, ...).
func (e *env) restConfig() (*rest.Config, error) {
	config, err := e.flags.ToRESTConfig()
	if err != nil {
		return nil, fmt.Errorf("reading the kubeconfig: %w; name one with --kubeconfig or KUBECONFIG, and a context with --context", err)
	}
	return config, nil
}

// namespace returns the namespace of -n, else of the kubeconfig's context,
// else "default".
func (e *env) namespace() (string, error) {
	ns, _, err := e.flags.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return "", fmt.Errorf("reading the kubeconfig's namespace: %w; name one with -n", err)
	}
	if ns == "" {
		ns = "default"
	}
	return ns, nil
}

// connect connects to the cluster of kubectl's flags.
func (e *env) connect() (*conn, error) {
	config, err := e.restConfig()
	if err != nil {
		return nil, err
	}
	namespace, err := e.namespace()
	if err != nil {
		return nil, err
	}
	httpClient, err := rest.HTTPClientFor(config)
	if err != nil {
		return nil, err
	}
	mapper, err := apiutil.NewDynamicRESTMapper(config, httpClient)
	if err != nil {
		return nil, err
	}
	c, err := client.New(config, client.Options{Mapper: mapper})
	if err != nil {
		return nil, err
	}
	hg, err := helm.NewGetter(config, mapper, logr.Discard())
	if err != nil {
		return nil, err
	}
	return &conn{client: c, mapper: mapper, helm: hg, namespace: namespace}, nil
}

// resource connects and reads the custom resource args name.
func (e *env) resource(ctx context.Context, args []string) (*conn, *unstructured.Unstructured, error) {
	kind, name, err := resourceArg(args)
	if err != nil {
		return nil, nil, err
	}
	c, err := e.connect()
	if err != nil {
		return nil, nil, err
	}
	obj, err := c.get(ctx, kind, name)
	if err != nil {
		return nil, nil, err
	}
	return c, obj, nil
}

// resourceArg returns the kind and name of a resource named as kubectl takes
// it: kind/name, or kind and name as two arguments.
func resourceArg(args []string) (kind, name string, err error) {
	switch len(args) {
	case 1:
		kind, name, _ = strings.Cut(args[0], "/")
		if kind != "" && name != "" && !strings.Contains(name, "/") {
			return kind, name, nil
		}
		return "", "", fmt.Errorf("want <kind>/<name>, such as webapp/my-webapp; got %q", args[0])
	case 2:
		if args[0] != "" && args[1] != "" && !strings.Contains(args[0], "/") && !strings.Contains(args[1], "/") {
			return args[0], args[1], nil
		}
		return "", "", fmt.Errorf("want <kind>/<name>, or <kind> <name>, such as webapp my-webapp; got %q", strings.Join(args, " "))
	case 0:
		return "", "", fmt.Errorf("want <kind>/<name>: name the resource, such as webapp/my-webapp")
	}
	return "", "", fmt.Errorf("want one resource, <kind>/<name>; got %d arguments: %q", len(args), strings.Join(args, " "))
}

// resourceArgs is the cobra.PositionalArgs of the commands that take one
// resource.
func resourceArgs(_ *cobra.Command, args []string) error {
	_, _, err := resourceArg(args)
	return err
}

// get reads the custom resource kind/name, kind as kubectl takes it
// (webapp, webapps, WebApp, webapps.webapp.my.domain).
func (c *conn) get(ctx context.Context, kind, name string) (*unstructured.Unstructured, error) {
	gvk, err := c.kindOf(kind)
	if err != nil {
		return nil, err
	}
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(gvk)
	if err := c.client.Get(ctx, types.NamespacedName{Namespace: c.namespace, Name: name}, obj); err != nil {
		return nil, err
	}
	return obj, nil
}

// waitFlag adds --wait to cmd, with its default and what it waits for.
func waitFlag(cmd *cobra.Command, wait *time.Duration, def time.Duration, what string) {
	cmd.Flags().DurationVar(wait, "wait", def, "how long to wait for "+what+" (0: do not wait)")
}

// checkWait returns an error naming --wait when it is negative.
func checkWait(wait time.Duration) error {
	if wait < 0 {
		return fmt.Errorf("flag --wait: %s is negative; use 0 not to wait, or a duration such as 2m", wait)
	}
	return nil
}

// printer writes lines and keeps the first write error.
type printer struct {
	w   io.Writer
	err error
}

func (p *printer) printf(format string, args ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format, args...)
	}
}
