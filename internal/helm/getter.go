package helm

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// restClientGetter gives Helm's kube client the manager's REST config, REST
// mapper and one shared, memory-cached discovery client, so that building an
// action configuration per reconcile costs no discovery round trips.
type restClientGetter struct {
	config    *rest.Config
	mapper    meta.RESTMapper
	discovery discovery.CachedDiscoveryInterface
	namespace string
}

var _ genericclioptions.RESTClientGetter = (*restClientGetter)(nil)

func newRESTClientGetter(cfg *rest.Config, mapper meta.RESTMapper) (*restClientGetter, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("creating discovery client: %w", err)
	}
	return &restClientGetter{config: cfg, mapper: mapper, discovery: memory.NewMemCacheClient(dc)}, nil
}

func (g *restClientGetter) forNamespace(ns string) *restClientGetter {
	c := *g
	c.namespace = ns
	return &c
}

// as returns g acting as user: every request of its REST config impersonates
// user (client-go's rest.ImpersonationConfig). Discovery stays shared: what
// kinds exist is no secret.
func (g *restClientGetter) as(user string) *restClientGetter {
	c := *g
	c.config = rest.CopyConfig(g.config)
	c.config.Impersonate = rest.ImpersonationConfig{UserName: user}
	return &c
}

func (g *restClientGetter) ToRESTConfig() (*rest.Config, error) {
	return rest.CopyConfig(g.config), nil
}

func (g *restClientGetter) ToDiscoveryClient() (discovery.CachedDiscoveryInterface, error) {
	return g.discovery, nil
}

func (g *restClientGetter) ToRESTMapper() (meta.RESTMapper, error) { return g.mapper, nil }

// ToRawKubeConfigLoader only serves the namespace: Helm's kube client asks it
// for the namespace of objects that do not name one.
func (g *restClientGetter) ToRawKubeConfigLoader() clientcmd.ClientConfig {
	return clientcmd.NewDefaultClientConfig(*clientcmdapi.NewConfig(),
		&clientcmd.ConfigOverrides{Context: clientcmdapi.Context{Namespace: g.namespace}})
}
