package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/gateway"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/mcptest"
)

// A modern backend's own list change (sent only on its listen streams)
// reaches the gateway's listeners, and the gateway lists the new tool.
func TestModernBackendListChanged(t *testing.T) {
	m := srv{name: "a", tools: []string{"t"}}.build()
	be := gateway.Backend{Name: "a", Transport: func() client.Transport { return &client.MemoryTransport{Server: m} }}
	_, c := start(t, []gateway.Backend{be}, nil)
	changes := listenTools(t, c)
	mcp.AddTool(m, &mcp.Tool{Name: "added", Description: "New."},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (string, error) { return "", nil })
	select {
	case <-changes:
	case <-time.After(30 * time.Second):
		t.Fatal("no notifications/tools/list_changed from the gateway")
	}
	if names := toolNames(t, c); len(names) != 2 || !slices.ContainsFunc(names, func(n string) bool { return len(n) >= 5 && n[len(n)-5:] == "added" }) {
		t.Errorf("tools after the change = %v, want the added one too", names)
	}
}

// subscribed returns a backend server with resources, and a channel that
// gets "URI" for every resource subscription the server is asked for: a
// legacy resources/subscribe, or each URI of a subscriptions/listen.
func subscribed(s srv) (*mcp.Server, <-chan string) {
	calls := make(chan string, 64)
	s.interceptors = append(s.interceptors, func(ctx context.Context, c *mcp.Call, next mcp.CallHandler) mcp.Outcome {
		switch c.Method {
		case "resources/subscribe":
			calls <- c.Name
		case "subscriptions/listen":
			var p struct {
				Notifications struct {
					ResourceSubscriptions []string `json:"resourceSubscriptions"`
				} `json:"notifications"`
			}
			json.Unmarshal(c.Params, &p)
			for _, u := range p.Notifications.ResourceSubscriptions {
				calls <- u
			}
		}
		return next(ctx, c)
	})
	return s.build(), calls
}

// A gateway listener's resourceSubscriptions reach the backend that owns
// each URI, and only it; that backend's resources/updated reaches the
// listener. For modern and legacy backends, and modern and legacy callers
// (whose listen is resources/subscribe). An unknown URI is refused with
// ResourceNotFound.
func TestResourceSubscriptionsRouted(t *testing.T) {
	for _, tc := range []struct {
		name           string
		legacyBackends bool
		legacyCaller   bool
	}{
		{"modern backends, modern caller", false, false},
		{"legacy backends, modern caller", true, false},
		{"modern backends, legacy caller", false, true},
		{"legacy backends, legacy caller", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, aCalls := subscribed(srv{name: "a", resources: []string{"file:///a"}})
			b, bCalls := subscribed(srv{name: "b", resources: []string{"file:///b"}, templates: []string{"repo://{name}"}})
			opts := &gateway.Options{}
			if tc.legacyBackends {
				opts.Bridge.Eras = client.LegacyOnly
			}
			g, _ := start(t, []gateway.Backend{
				{Name: "a", Transport: func() client.Transport { return &client.MemoryTransport{Server: a} }},
				{Name: "b", Transport: func() client.Transport { return &client.MemoryTransport{Server: b} }},
			}, opts)
			var opt []mcptest.Option
			if tc.legacyCaller {
				opt = append(opt, mcptest.Legacy())
			}
			c := mcptest.NewClient(t, g.Server(), opt...).Client()
			if r := c.Capabilities().Resources; r == nil || !r.Subscribe {
				t.Fatalf("the gateway's resources capability = %+v, want subscribe", r)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()

			for _, f := range []client.ListenFilter{
				{ResourceSubscriptions: []string{"file:///b"}},
				{ResourceSubscriptions: []string{"repo://mcpkit"}}, // the only matching template
			} {
				uri := f.ResourceSubscriptions[0]
				var got []string
				for ev, err := range c.Listen(ctx, f) {
					if err != nil {
						t.Fatal(err)
					}
					if ev.Acknowledged != nil {
						if diff := cmp.Diff(f, *ev.Acknowledged); diff != "" {
							t.Fatalf("acknowledged (-want +got):\n%s", diff)
						}
						select {
						case u := <-bCalls:
							if u != uri {
								t.Fatalf("backend b was subscribed to %q, want %q", u, uri)
							}
						case <-ctx.Done():
							t.Fatal("backend b was not subscribed")
						}
						// a's update of a URI nobody subscribed first: it
						// must not reach the listener.
						a.NotifyResourceUpdated("file:///a")
						b.NotifyResourceUpdated(uri)
						continue
					}
					var p struct {
						URI string `json:"uri"`
					}
					json.Unmarshal(ev.Notification.Params, &p)
					got = append(got, ev.Notification.Method+" "+p.URI)
					break
				}
				if want := []string{"notifications/resources/updated " + uri}; !cmp.Equal(got, want) {
					t.Errorf("notifications = %q, want %q", got, want)
				}
			}
			select {
			case u := <-aCalls:
				t.Errorf("backend a was subscribed to %q; nobody asked for its URIs", u)
			default:
			}

			// A URI no backend owns: refused as its read is, no backend asked.
			for _, err := range c.Listen(ctx, client.ListenFilter{ResourceSubscriptions: []string{"file:///nowhere"}}) {
				var e *mcp.Error
				if !errors.As(err, &e) || e.Code != -32602 || !strings.Contains(e.Message, "file:///nowhere") {
					t.Errorf("unknown URI: err = %v, want ResourceNotFound", err)
				}
				break
			}
			select {
			case u := <-bCalls:
				if u == "file:///nowhere" {
					t.Errorf("a backend was subscribed to an unknown URI")
				}
			default:
			}
		})
	}
}

// The front declares resources.subscribe when a backend does; a
// subscription to a URI whose backend does not declare it is refused
// naming the backend, and a gateway of such backends only declares none.
func TestResourceSubscriptionsUnsupported(t *testing.T) {
	a, aCalls := subscribed(srv{name: "a", resources: []string{"file:///a"}})
	a.Advertise(&mcp.Advertisement{Capabilities: mcp.ServerCapabilities{Resources: &mcp.ResourcesCapability{}}})
	b := srv{name: "b", resources: []string{"file:///b"}}.backend()
	ab := gateway.Backend{Name: "a", Transport: func() client.Transport { return &client.MemoryTransport{Server: a} }}

	_, only := start(t, []gateway.Backend{ab}, nil)
	if r := only.Capabilities().Resources; r == nil || r.Subscribe {
		t.Errorf("a gateway of a backend without subscriptions declares resources %+v, want no subscribe", r)
	}

	_, c := start(t, []gateway.Backend{ab, b}, nil)
	if r := c.Capabilities().Resources; r == nil || !r.Subscribe {
		t.Fatalf("resources capability = %+v, want subscribe (backend b has it)", r)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for ev, err := range c.Listen(ctx, client.ListenFilter{ResourceSubscriptions: []string{"file:///b", "file:///a"}}) {
		var e *mcp.Error
		if !errors.As(err, &e) || e.Code != -32602 || !strings.Contains(e.Message, "backend a") {
			t.Errorf("listen = %+v, %v; want -32602 naming backend a", ev, err)
		}
		break
	}
	select {
	case u := <-aCalls:
		t.Errorf("backend a was subscribed to %q", u)
	default:
	}
}
