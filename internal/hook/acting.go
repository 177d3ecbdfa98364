package hook

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

type actingKey struct{}

// WithActing returns ctx carrying c, the client a hook writes with on behalf
// of the resource it runs for: one impersonating the account rudder acts as
// for that resource (package identity), so that the API server's RBAC bounds
// a hook's writes as it bounds the release's.
func WithActing(ctx context.Context, c client.Client) context.Context {
	return context.WithValue(ctx, actingKey{}, c)
}

// Acting returns the client ctx carries for a hook's writes (WithActing),
// else fallback, the hook's own.
func Acting(ctx context.Context, fallback client.Client) client.Client {
	if c, ok := ctx.Value(actingKey{}).(client.Client); ok && c != nil {
		return c
	}
	return fallback
}

// Reading returns the reader of what a resource names for a hook to read (a
// Secret by name, another resource's claim): the client ctx carries
// (WithActing), which reads from the API server as the resource's account,
// else fallback, the hook's own. What the account may not read is refused
// with the API server's Forbidden: a resource reaches through a hook no
// further than through its release.
func Reading(ctx context.Context, fallback client.Reader) client.Reader {
	if c, ok := ctx.Value(actingKey{}).(client.Client); ok && c != nil {
		return c
	}
	return fallback
}
