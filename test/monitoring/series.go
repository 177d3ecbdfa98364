package monitoring

import "strings"

// Series is one metric name served on rudder's /metrics endpoint.
type Series struct {
	// Labels are the series' own label names; a scrape adds targetLabels.
	Labels []string
	// Values lists every value of a label whose values are a closed set.
	Values map[string][]string
}

// shared reports whether other programs export the series too (everything
// that is not rudder's own), so that a query must narrow it to rudder's job.
func shared(name string) bool { return !strings.HasPrefix(name, "rudder_") }

// targetLabels are the labels Prometheus adds to each series of a target
// found through a ServiceMonitor (config/prometheus/servicemonitor.yaml).
var targetLabels = []string{"job", "instance", "namespace", "pod", "service", "endpoint", "container"}

// Closed sets of label values, as rudder and controller-runtime write them.
var (
	releaseStates = []string{"none", "deployed", "failed", "pending", "paused", "rolled_back", "out_of_band"}
	helmActions   = []string{"install", "upgrade", "rollback", "uninstall", "test"}
	outcomes      = []string{"success", "failure"}
	hooks         = []string{"password", "backup", "restore", "version", "volume"}
	rolloutPhases = []string{"Progressing", "Paused", "Halted", "Complete", "Undoing", "Undone", "Superseded"}
	// controller_runtime_reconcile_total's result.
	reconcileResults = []string{"success", "error", "requeue", "requeue_after"}
)

// knownSeries holds every series rudder serves, by name: its own (internal/reconcile,
// internal/helm, internal/hook/backup, internal/shard, internal/rollout) and those of controller-runtime
// v0.25 and of the Prometheus client's Go and process collectors that the
// dashboard or the alerts may use. A histogram is there as its _bucket, _sum
// and _count series, which are what a scrape stores.
var knownSeries = known()

func known() map[string]Series {
	m := map[string]Series{}
	plain := func(name string, labels ...string) Series {
		s := Series{Labels: labels}
		m[name] = s
		return s
	}
	histogram := func(name string, labels ...string) {
		m[name+"_bucket"] = Series{Labels: append(append([]string(nil), labels...), "le")}
		m[name+"_sum"] = Series{Labels: labels}
		m[name+"_count"] = Series{Labels: labels}
	}
	values := func(name string, v map[string][]string) {
		for _, n := range []string{name, name + "_bucket", name + "_sum", name + "_count"} {
			if s, ok := m[n]; ok {
				s.Values = v
				m[n] = s
			}
		}
	}

	// rudder's own.
	histogram("rudder_reconcile_duration_seconds", "kind", "step")
	histogram("rudder_helm_action_duration_seconds", "kind", "action", "result")
	values("rudder_helm_action_duration_seconds", map[string][]string{"action": helmActions, "result": outcomes})
	plain("rudder_releases", "kind", "group", "state")
	values("rudder_releases", map[string][]string{"state": releaseStates})
	plain("rudder_release_state", "kind", "group", "namespace", "name", "state")
	values("rudder_release_state", map[string][]string{"state": releaseStates})
	plain("rudder_resource_ready", "kind", "group", "namespace", "name")
	plain("rudder_drift_repairs_total", "kind", "object_kind")
	plain("rudder_drift_comparisons_total", "kind")
	plain("rudder_hook_runs_total", "kind", "hook", "result")
	values("rudder_hook_runs_total", map[string][]string{"hook": hooks, "result": outcomes})
	plain("rudder_backups_total", "namespace", "name", "result")
	values("rudder_backups_total", map[string][]string{"result": outcomes})
	plain("rudder_backup_last_success_timestamp_seconds", "namespace", "name")
	plain("rudder_backup_schedule_interval_seconds", "namespace", "name")
	plain("rudder_reconciler_entries", "kind", "group")
	plain("rudder_rollout_step", "kind", "rollout")
	plain("rudder_rollout_resources", "kind", "rollout", "state")
	values("rudder_rollout_resources", map[string][]string{"state": {"total", "updated", "ready", "failed"}})
	plain("rudder_rollout_phase", "kind", "rollout", "phase")
	values("rudder_rollout_phase", map[string][]string{"phase": rolloutPhases})
	plain("rudder_release_decodes_total")
	plain("rudder_shard_objects_received_total", "kind", "source", "own")
	values("rudder_shard_objects_received_total", map[string][]string{"source": {"list", "watch"}, "own": {"true", "false"}})

	// controller-runtime's, with controller = the kind.
	plain("controller_runtime_reconcile_total", "controller", "result")
	values("controller_runtime_reconcile_total", map[string][]string{"result": reconcileResults})
	for _, name := range []string{
		"controller_runtime_reconcile_errors_total",
		"controller_runtime_terminal_reconcile_errors_total",
		"controller_runtime_reconcile_panics_total",
		"controller_runtime_reconcile_timeouts_total",
		"controller_runtime_active_workers",
		"controller_runtime_max_concurrent_reconciles",
	} {
		plain(name, "controller")
	}
	histogram("controller_runtime_reconcile_time_seconds", "controller")
	plain("workqueue_depth", "name", "controller", "priority")
	for _, name := range []string{
		"workqueue_adds_total",
		"workqueue_retries_total",
		"workqueue_unfinished_work_seconds",
		"workqueue_longest_running_processor_seconds",
	} {
		plain(name, "name", "controller")
	}
	histogram("workqueue_queue_duration_seconds", "name", "controller")
	histogram("workqueue_work_duration_seconds", "name", "controller")
	plain("rest_client_requests_total", "code", "method", "host")
	plain("leader_election_master_status", "name")

	// The Prometheus client's process and Go collectors (the ones worth a
	// panel; the Go collector serves many more).
	for _, name := range []string{
		"process_cpu_seconds_total",
		"process_resident_memory_bytes",
		"process_virtual_memory_bytes",
		"process_open_fds",
		"process_max_fds",
		"process_start_time_seconds",
		"go_goroutines",
		"go_threads",
		"go_memstats_alloc_bytes",
		"go_memstats_heap_inuse_bytes",
	} {
		plain(name)
	}
	plain("go_gc_duration_seconds", "quantile")
	plain("go_gc_duration_seconds_sum")
	plain("go_gc_duration_seconds_count")
	return m
}
