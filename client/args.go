package client

import (
	"encoding/json"
	"slices"
	"strconv"

	"github.com/mcpkit/mcpkit/internal/wire"
)

// maxFastArgs is the most members marshalArgs encodes itself.
const maxFastArgs = 16

// marshalArgs encodes a tool call's arguments exactly as json.Marshal
// does, without its reflection when args is a small map[string]any of
// strings, booleans, integers and nils (the usual arguments): that is one
// allocation instead of json.Marshal's four or more. Anything else goes
// to json.Marshal.
func marshalArgs(args any) ([]byte, error) {
	m, ok := args.(map[string]any)
	if !ok || m == nil || len(m) > maxFastArgs {
		return json.Marshal(args)
	}
	var arr [maxFastArgs]string
	keys := arr[:0]
	size := 2
	for k, v := range m {
		switch v := v.(type) {
		case string:
			size += len(v) + 2
		case bool, nil, int, int64:
			size += 20
		default:
			return json.Marshal(args)
		}
		keys = append(keys, k)
		size += len(k) + 4
	}
	slices.Sort(keys) // json.Marshal sorts map keys
	b := make([]byte, 0, size+size/8)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = wire.AppendString(b, k)
		b = append(b, ':')
		switch v := m[k].(type) {
		case string:
			b = wire.AppendString(b, v)
		case bool:
			b = strconv.AppendBool(b, v)
		case nil:
			b = append(b, "null"...)
		case int:
			b = strconv.AppendInt(b, int64(v), 10)
		case int64:
			b = strconv.AppendInt(b, v, 10)
		}
	}
	return append(b, '}'), nil
}
