package apicalls

import (
	"context"
	"net/http"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Requests is rudder_api_requests_total. Its verb is the API server's: get,
// list, watch, create, update, patch, delete or deletecollection, with
// "-dryrun" after a dry run's.
var Requests = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "rudder_api_requests_total",
	Help: "Requests sent to the API server, by verb (a dry run's ends in -dryrun), resource (with its subresource after a slash) and the step that sent them.",
}, []string{"verb", "resource", "step"})

func init() { metrics.Registry.MustRegister(Requests) }

// Unnamed is the step of a request whose context and client name none: the
// caches' lists and watches, the event broadcaster, leader election.
const Unnamed = "other"

type stepKey struct{}

// WithStep returns ctx naming step as the sender of the requests made with it.
func WithStep(ctx context.Context, step string) context.Context {
	return context.WithValue(ctx, stepKey{}, step)
}

// Step returns the step ctx names, "" if none.
func Step(ctx context.Context) string {
	s, _ := ctx.Value(stepKey{}).(string)
	return s
}

// Count makes every request of cfg's clients counted in Requests. A config
// copied from cfg (rest.CopyConfig) keeps counting.
func Count(cfg *rest.Config) {
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return counter{next: rt} })
}

// Named makes the requests of cfg's clients whose context names no step count
// as step's. cfg must count already (Count): Named wraps outside it.
func Named(cfg *rest.Config, step string) {
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return namer{next: rt, step: step} })
}

type namer struct {
	next http.RoundTripper
	step string
}

func (n namer) RoundTrip(req *http.Request) (*http.Response, error) {
	if Step(req.Context()) == "" {
		req = req.WithContext(WithStep(req.Context(), n.step))
	}
	return n.next.RoundTrip(req)
}

type counter struct{ next http.RoundTripper }

func (c counter) RoundTrip(req *http.Request) (*http.Response, error) {
	step := Step(req.Context())
	if step == "" {
		step = Unnamed
	}
	verb, resource := Describe(req)
	Requests.WithLabelValues(verb, resource, step).Inc()
	return c.next.RoundTrip(req)
}

// Describe returns the API server's verb and the resource of req, from its
// method, path and query, as the API server's audit names them.
func Describe(req *http.Request) (verb, resource string) {
	parts := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	resource, named := resourceOf(parts)
	q := req.URL.Query()
	switch req.Method {
	case http.MethodGet:
		switch {
		case q.Get("watch") == "true" || q.Get("watch") == "1":
			verb = "watch"
		case named:
			verb = "get"
		default:
			verb = "list"
		}
	case http.MethodPost:
		verb = "create"
	case http.MethodPut:
		verb = "update"
	case http.MethodPatch:
		verb = "patch"
	case http.MethodDelete:
		verb = "delete"
		if !named {
			verb = "deletecollection"
		}
	default:
		verb = strings.ToLower(req.Method)
	}
	if _, ok := q["dryRun"]; ok {
		verb += "-dryrun"
	}
	return verb, resource
}

// resourceOf reads the resource (with its subresource) of an API path,
// /api/v1/... or /apis/GROUP/VERSION/..., and whether the path names one
// object. Other paths (discovery, /version) are their first segment.
func resourceOf(parts []string) (resource string, named bool) {
	var rest []string
	switch {
	case len(parts) >= 2 && parts[0] == "api":
		rest = parts[2:]
	case len(parts) >= 3 && parts[0] == "apis":
		rest = parts[3:]
	default:
		return "/" + parts[0], false
	}
	if len(rest) >= 2 && rest[0] == "namespaces" && len(rest) != 2 {
		rest = rest[2:] // /namespaces/NS/RESOURCE...; /namespaces/NS is a namespace itself
	}
	switch len(rest) {
	case 0:
		return "discovery", false
	case 1:
		return rest[0], false
	case 2:
		return rest[0], true
	default:
		return rest[0] + "/" + rest[2], true
	}
}
