package cli

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"go.uber.org/zap/zapcore"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// webAppGVK is the kind of the tests' resources, built into rudder.
var webAppGVK = schema.GroupVersionKind{Group: "webapp.my.domain", Version: "v1", Kind: "WebApp"}

// zapLevelQuiet keeps the manager's logs to errors during the tests.
const zapLevelQuiet = zapcore.ErrorLevel

// writeKubeconfig writes into dir a kubeconfig whose context envtest reaches
// config's API server as config's user, and whose current context,
// unreachable, reaches no server.
func writeKubeconfig(dir string, config *rest.Config) (string, error) {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["envtest"] = &clientcmdapi.Cluster{Server: config.Host, CertificateAuthorityData: config.CAData}
	kc.Clusters["nowhere"] = &clientcmdapi.Cluster{Server: "https://127.0.0.1:1"}
	kc.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: config.CertData, ClientKeyData: config.KeyData,
		Token: config.BearerToken}
	kc.Contexts["envtest"] = &clientcmdapi.Context{Cluster: "envtest", AuthInfo: "admin"}
	kc.Contexts["unreachable"] = &clientcmdapi.Context{Cluster: "nowhere", AuthInfo: "admin"}
	kc.CurrentContext = "unreachable"
	file := filepath.Join(dir, "kubeconfig")
	return file, clientcmd.WriteToFile(*kc, file)
}

// run runs the command line args against the test API server (kubeconfig,
// context envtest) and returns what it printed to standard output.
func run(ctx context.Context, args ...string) (string, error) {
	out, _, err := runFull(ctx, "rudder", args...)
	return out, err
}

// runFull runs the command line args, called as name, against the test
// API server and returns what it printed to standard output and error.
func runFull(ctx context.Context, name string, args ...string) (stdout, stderr string, err error) {
	var out, errOut bytes.Buffer
	flags := []string{"--kubeconfig", kubeconfig, "--context", "envtest"}
	if len(args) > 0 && args[0] == cobra.ShellCompRequestCmd {
		// The last argument is the one to complete.
		args = append(append([]string{args[0]}, flags...), args[1:]...)
	} else {
		args = append(args, flags...)
	}
	err = Run(ctx, args, Options{Name: name, IO: genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}})
	return out.String(), errOut.String(), err
}
