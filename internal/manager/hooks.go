package manager

import (
	"fmt"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/rudder-operator/rudder/internal/hook"
	"github.com/rudder-operator/rudder/internal/hooks/backup"
	"github.com/rudder-operator/rudder/internal/hooks/chaos"
	"github.com/rudder-operator/rudder/internal/hooks/password"
	"github.com/rudder-operator/rudder/internal/hooks/version"
	"github.com/rudder-operator/rudder/internal/hooks/volume"
	"github.com/rudder-operator/rudder/internal/watches"
)

// builtinHooks returns the registry of the hooks built into rudder, which
// watches.yaml entries enable by name. Hooks only keep mgr's clients when
// built, so a nil mgr gives a registry good for checking names.
func builtinHooks(mgr ctrl.Manager, extra []hook.Hook) (*hook.Registry, error) {
	pw := &password.Hook{}
	ver := &version.Hook{Container: "postgres"}
	bak := &backup.Hook{}
	restore := &backup.Restore{}
	vol := &volume.Hook{}
	podChaos := &chaos.Hook{}
	if mgr != nil {
		// Secrets and pods are read from the API server: caching every Secret
		// would hold every Helm release in memory, and every pod, a cluster.
		pw.Client, pw.Reader = mgr.GetClient(), mgr.GetAPIReader()
		ver.Reader = mgr.GetAPIReader()
		bak.Client, bak.Reader = mgr.GetClient(), mgr.GetAPIReader()
		restore.Client, restore.Reader = mgr.GetClient(), mgr.GetAPIReader()
		vol.Client, vol.Reader = mgr.GetClient(), mgr.GetAPIReader()
		podChaos.Client, podChaos.Reader = mgr.GetClient(), mgr.GetAPIReader()
	}
	r := &hook.Registry{}
	for _, h := range append([]hook.Hook{pw, ver, bak, restore, vol, podChaos}, extra...) {
		if err := r.Add(h); err != nil {
			return nil, err
		}
	}
	return r, nil
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
