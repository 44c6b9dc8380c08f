package listenhook

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/mcpkit/mcpkit/mcp"
)

func TestChain(t *testing.T) {
	var calls []string
	hook := func(name string, fail bool) Observe {
		return func(context.Context, *mcp.RequestInfo, mcp.SubscriptionFilter) (func(), error) {
			calls = append(calls, name)
			if fail {
				return nil, errors.New(name + " refused")
			}
			return func() { calls = append(calls, "end "+name) }, nil
		}
	}
	for _, tc := range []struct {
		name               string
		userFails, ownFail bool
		noUser             bool
		want               []string
		wantErr            bool
	}{
		{name: "both", want: []string{"user", "own", "end own", "end user"}},
		{name: "user refuses", userFails: true, want: []string{"user"}, wantErr: true},
		{name: "own refuses", ownFail: true, want: []string{"user", "own", "end user"}, wantErr: true},
		{name: "no user", noUser: true, want: []string{"own", "end own"}},
	} {
		calls = nil
		var user Observe
		if !tc.noUser {
			user = hook("user", tc.userFails)
		}
		end, err := Chain(user, hook("own", tc.ownFail))(context.Background(), nil, mcp.SubscriptionFilter{})
		if (err != nil) != tc.wantErr {
			t.Errorf("%s: err %v", tc.name, err)
		}
		if end != nil {
			end()
		}
		if !slices.Equal(calls, tc.want) {
			t.Errorf("%s: calls %q, want %q", tc.name, calls, tc.want)
		}
	}
}
