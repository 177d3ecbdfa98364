package manager

import (
	"fmt"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rudder-operator/rudder/internal/hook"
	"github.com/rudder-operator/rudder/internal/hook/backup"
	"github.com/rudder-operator/rudder/internal/hook/chaos"
	"github.com/rudder-operator/rudder/internal/hook/leader"
	"github.com/rudder-operator/rudder/internal/hook/password"
	"github.com/rudder-operator/rudder/internal/hook/version"
	"github.com/rudder-operator/rudder/internal/hook/volume"
	"github.com/rudder-operator/rudder/internal/watches"
)

// builtinHooks returns the registry of the hooks built into rudder, which
// watches.yaml entries enable by name. Hooks only keep mgr's clients when
// built, so a nil mgr gives a registry good for checking names.
func builtinHooks(mgr ctrl.Manager, extra []hook.Hook) (*hook.Registry, error) {
	if mgr == nil {
		return hooksWith(nil, nil, extra)
	}
	// Secrets and pods are read from the API server: caching every Secret
	// would hold every Helm release in memory, and every pod, a cluster.
	return hooksWith(mgr.GetClient(), mgr.GetAPIReader(), extra)
}

// HooksWith returns the hooks built into rudder, writing with c and reading
// with r: `rudder diff` computes the hooks' values with a dry-run client
// (client.NewDryRunClient), which writes nothing.
func HooksWith(c client.Client, r client.Reader) (*hook.Registry, error) {
	return hooksWith(c, r, nil)
}

func hooksWith(c client.Client, r client.Reader, extra []hook.Hook) (*hook.Registry, error) {
	pw := &password.Hook{Client: c, Reader: r}
	ver := &version.Hook{Container: "postgres", Reader: r}
	bak := &backup.Hook{Client: c, Reader: r}
	restore := &backup.Restore{Client: c, Reader: r}
	vol := &volume.Hook{Client: c, Reader: r}
	// The leader hook decides on live pods, not on the metadata-only cache
	// that wakes it (hook.Watcher).
	lead := &leader.Hook{Client: c, Reader: r}
	podChaos := &chaos.Hook{Client: c, Reader: r}
	reg := &hook.Registry{}
	for _, h := range append([]hook.Hook{pw, ver, bak, restore, vol, lead, podChaos}, extra...) {
		if err := reg.Add(h); err != nil {
			return nil, err
		}
	}
	return reg, nil
}

// checkHooks refuses, before anything connects to the cluster, a watches
// entry naming a hook this build does not have: skipped silently, it would
// leave a kind half served.
func checkHooks(ws []watches.Watch, extra []hook.Hook) error {
	registry, err := builtinHooks(nil, extra)
	if err != nil {
		return err
	}
	for _, w := range ws {
		if _, err := registry.Resolve(w.Hooks); err != nil {
			return fmt.Errorf("watches: kind %s: field \"hooks\": %w; remove it from the entry", w.GVK.Kind, err)
		}
	}
	return nil
}

// BuiltinHooks returns the hooks built into rudder, without clients: good for
// checking names and for reading what they declare (hook.StatusSchemer), as
// `rudder manifests` does, not for reconciling.
func BuiltinHooks() (*hook.Registry, error) {
	return builtinHooks(nil, nil)
}
