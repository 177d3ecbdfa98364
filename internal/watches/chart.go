package watches

import "github.com/rudder-operator/rudder/internal/helm"

// LoadChart loads the watch's chart anew (helm.LoadChart): load it for each
// Helm action rather than sharing one.
func (w Watch) LoadChart() (*helm.Chart, error) {
	return helm.LoadChart(w.ChartFS, w.ChartDir)
}
