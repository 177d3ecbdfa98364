// Package apicalls counts the requests rudder sends to the API server, by
// verb, resource and the step that sends them, as the metric
// rudder_api_requests_total: what each resource costs the control plane.
//
// A request's step is the one its context names (WithStep), else the one its
// client names (Named): Helm's kube client and storage driver send requests
// with a context of their own, so their client names them.
package apicalls
