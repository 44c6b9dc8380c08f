package gateway

import (
	"context"
	"slices"

	"github.com/mcpkit/mcpkit/mcp"
)

// This file routes resource subscriptions to the backends. The front's
// ListenOptions.Observe (observe) gets the resourceSubscriptions of a
// listen stream, and each resources/subscribe of a legacy caller (a filter
// naming one URI); it routes each URI as resources/read does (resolve)
// and subscribes the owner's bridge to it (bridge.Bridge.Subscribe:
// reference-counted per URI, renewed when the backend restarts). The
// backend's notifications/resources/updated become Changes on its
// bridge's front, whose Bus is the gateway front's: the listeners that
// named the URI get them. A URI no backend owns is refused
// (ResourceNotFound, as its read is), and so is one whose owner does not
// declare resources.subscribe, so that an acknowledgement never grants a
// URI whose updates cannot come.

// observe is the front's ListenOptions.Observe: it subscribes the owner of
// each URI of granted.ResourceSubscriptions and returns what ends those
// subscriptions. One URI that cannot be routed or subscribed refuses the
// stream (or the legacy subscribe), and what was subscribed for it is
// ended.
func (g *Gateway) observe(ctx context.Context, info *mcp.RequestInfo, granted mcp.SubscriptionFilter) (func(), error) {
	uris := slices.Compact(slices.Sorted(slices.Values(granted.ResourceSubscriptions)))
	if len(uris) == 0 {
		return nil, nil
	}
	r := g.cur.Load()
	var ends []func()
	end := func() {
		for _, e := range ends {
			e()
		}
	}
	for _, u := range uris {
		e, err := r.subscribe(ctx, info, u)
		if err != nil {
			end()
			return nil, err
		}
		ends = append(ends, e)
	}
	return end, nil
}

// subscribe routes one subscription to the backend that owns uri.
func (g *router) subscribe(ctx context.Context, info *mcp.RequestInfo, uri string) (func(), error) {
	b, err := g.resolve(ctx, uri)
	if err != nil {
		return nil, err
	}
	if err := g.checkScopes(&mcp.MethodRequest{Method: "resources/subscribe", Info: info}, b, ""); err != nil {
		return nil, err
	}
	if err := b.down(ctx); err != nil {
		return nil, err
	}
	br := b.bridge()
	if r := br.Describe().Capabilities.Resources; r == nil || !r.Subscribe {
		return nil, mcp.InvalidParams("Invalid params: backend " + b.name + ", which serves " + uri + ", does not support resource subscriptions")
	}
	end, err := br.Subscribe(ctx, info, uri)
	if err != nil {
		return nil, b.wrap(err)
	}
	return end, nil
}

// subscribable reports whether any running backend of g declares
// resources.subscribe: the front then declares it too.
func (g *router) subscribable() bool {
	for _, b := range g.backends {
		if br := b.bridge(); br != nil {
			if r := br.Describe().Capabilities.Resources; r != nil && r.Subscribe {
				return true
			}
		}
	}
	return false
}
