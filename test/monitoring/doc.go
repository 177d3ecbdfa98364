// Package monitoring checks rudder's alerts (config/prometheus) and dashboard
// (config/grafana) against the series rudder's /metrics serves, parsing every
// PromQL expression with Prometheus's own parser. It is a Go module of its own
// so that the Prometheus module's requirements stay out of rudder's go.mod.
package monitoring
