package apicalls

import (
	"context"
	"net/http"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/endpoints/request"
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

// requestInfo reads requests as the API server does.
var requestInfo = &request.RequestInfoFactory{APIPrefixes: sets.NewString("api", "apis"), GrouplessAPIPrefixes: sets.NewString("api")}

// Describe returns the verb and the resource of req as the API server's
// request info names them (its audit log too), the subresource after a
// slash; a request for no resource (discovery, /version) is named by its
// path.
func Describe(req *http.Request) (verb, resource string) {
	info, err := requestInfo.NewRequestInfo(req)
	switch {
	case err != nil:
		verb, resource = strings.ToLower(req.Method), req.URL.Path
	case !info.IsResourceRequest:
		verb, resource = info.Verb, info.Path
	default:
		verb, resource = info.Verb, info.Resource
		if info.Subresource != "" {
			resource += "/" + info.Subresource
		}
	}
	if _, ok := req.URL.Query()["dryRun"]; ok {
		verb += "-dryrun"
	}
	return verb, resource
}
