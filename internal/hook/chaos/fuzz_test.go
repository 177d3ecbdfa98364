package chaos

import (
	"testing"

	"github.com/rudder-operator/rudder/internal/hook/hooktest"
)

// FuzzParseSpec feeds arbitrary specs to the hook's reading of a PodChaos's
// spec. Besides what hooktest.ReadSpec checks of every hook, a spec it
// accepts can drive a schedule: a selector that is not empty, at least one pod
// a round, a budget of at least one and an interval more than 0.
func FuzzParseSpec(f *testing.F) {
	for _, seed := range []string{
		`{}`,
		`{"selector": {"matchLabels": {"app": "web"}}}`,
		`{"selector": {"matchLabels": {"app": "web"}}, "action": "evict", "percent": "25%", "interval": "10s", "duration": "40s", "maxUnavailable": 2}`,
		`{"selector": {"matchExpressions": [{"key": "app", "operator": "In", "values": ["web"]}]}, "count": 3}`,
		`{"selector": {"matchLabels": {}}}`,
		`{"selector": "app=web"}`,
		`{"selector": {"matchLabels": {"app": 1}}}`,
		`{"selector": {"matchLabels": {"app": "web"}}, "interval": "0s"}`,
		`{"selector": {"matchLabels": {"app": "web"}}, "percent": "150%"}`,
		`{"selector": {"matchLabels": {"app": "web"}}, "count": 0}`,
		`{"selector": {"matchLabels": {"app": "web"}}, "count": 1.5}`,
		`{"selector": {"matchLabels": {"app": "web"}}, "action": "crash"}`,
	} {
		f.Add([]byte(seed))
	}
	fields := []string{"selector", "action", "count", "percent", "interval", "duration", "maxUnavailable"}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, ok := hooktest.ReadSpec(t, data, fields, parseSpec)
		if !ok || r.Err != nil {
			return
		}
		s := r.Got
		if s.Selector == nil || s.Selector.Empty() || s.Count < 1 || s.MaxUnavailable < 1 || s.Interval <= 0 || s.Duration < 0 ||
			s.Percent < 0 || s.Percent > 100 || (s.Action != ActionKill && s.Action != ActionEvict) {
			t.Errorf("accepted a spec that cannot drive a schedule: %+v", s)
		}
	})
}
