package backup

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/robfig/cron/v3"
	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Backup series of each Database, on the manager's metrics endpoint. The
// alert "backup older than twice its schedule" compares the first two.
var (
	lastSuccess = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "rudder_backup_last_success_timestamp_seconds",
		Help: "When the newest successful backup Job of a Database completed, in Unix seconds.",
	}, []string{"namespace", "name"})
	scheduleInterval = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "rudder_backup_schedule_interval_seconds",
		Help: "The longest time between two runs of a Database's backup schedule (spec.backup.schedule), while backups are enabled.",
	}, []string{"namespace", "name"})
	backupsFinished = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "rudder_backups_total",
		Help: "Backup Jobs of a Database seen to finish since rudder started, by result (success, failure).",
	}, []string{"namespace", "name", "result"})
)

func init() {
	metrics.Registry.MustRegister(lastSuccess, scheduleInterval, backupsFinished)
}

// tally counts each finished backup Job once. A Database seen for the first
// time since rudder started has its finished Jobs taken as already counted,
// so that a restart does not count old backups as new ones.
type tally struct {
	mu       sync.Mutex
	finished map[types.NamespacedName]map[types.UID]bool
}

// observe records the Jobs of Database key as listed now, and the schedule
// while backups are enabled (empty otherwise).
func (t *tally) observe(key types.NamespacedName, jobs []batchv1.Job, schedule string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.finished == nil {
		t.finished = map[types.NamespacedName]map[types.UID]bool{}
	}
	seen, known := t.finished[key]
	if !known { // the series start at zero, so that the first backup counts as an increase
		for _, result := range []string{"success", "failure"} {
			backupsFinished.WithLabelValues(key.Namespace, key.Name, result)
		}
	}
	now := make(map[types.UID]bool, len(jobs))
	var newest time.Time
	for i := range jobs {
		at, ok, finished := outcome(&jobs[i])
		if !finished {
			continue
		}
		now[jobs[i].UID] = true
		if known && !seen[jobs[i].UID] {
			backupsFinished.WithLabelValues(key.Namespace, key.Name, outcomeLabel(ok)).Inc()
		}
		if ok && at.After(newest) {
			newest = at
		}
	}
	t.finished[key] = now // only Jobs that still exist: memory follows the Jobs kept
	if !newest.IsZero() {
		lastSuccess.WithLabelValues(key.Namespace, key.Name).Set(float64(newest.Unix()))
	}
	if every, ok := longestGap(schedule, time.Now()); ok {
		scheduleInterval.WithLabelValues(key.Namespace, key.Name).Set(every.Seconds())
	} else {
		scheduleInterval.DeleteLabelValues(key.Namespace, key.Name)
	}
}

// forget drops Database key's series: it is gone.
func (t *tally) forget(key types.NamespacedName) {
	t.mu.Lock()
	delete(t.finished, key)
	t.mu.Unlock()
	lastSuccess.DeleteLabelValues(key.Namespace, key.Name)
	scheduleInterval.DeleteLabelValues(key.Namespace, key.Name)
	for _, result := range []string{"success", "failure"} {
		backupsFinished.DeleteLabelValues(key.Namespace, key.Name, result)
	}
}

func outcomeLabel(ok bool) string {
	if ok {
		return "success"
	}
	return "failure"
}

// longestGap is the longest time between two of the next runs of a cron
// schedule (five fields or a @descriptor, as a CronJob takes it): "every
// weekday at 2" runs a day apart but leaves the weekend, three days.
func longestGap(schedule string, from time.Time) (time.Duration, bool) {
	if schedule == "" {
		return 0, false
	}
	s, err := cron.ParseStandard(schedule)
	if err != nil {
		return 0, false
	}
	var longest time.Duration
	prev := s.Next(from)
	for range 64 {
		next := s.Next(prev)
		if next.IsZero() {
			break
		}
		longest = max(longest, next.Sub(prev))
		prev = next
	}
	return longest, longest > 0
}
