package mcp

// This file lets a Provider page a list of its own making (a gateway
// merging several backends' lists) with cursors that any replica sharing
// the state keys can continue.

// SealCursor seals data (a Provider's own position in a list) into an
// opaque cursor with the server's state keys (ServerOptions.State.Keys),
// bound to the request's method and principal and valid for
// ServerOptions.State.TTL: only this method, for this caller, on a replica
// sharing the keys, opens it. It is safe for concurrent use.
func (r *MethodRequest) SealCursor(data []byte) (string, error) {
	x := r.x
	return x.s.state.sealState(cursorMethod(r.Method), nil, x.statePrincipal(), data, nil)
}

// OpenCursor returns the data of a cursor made by SealCursor for the same
// method and caller. A cursor that fails verification, belongs to another
// method or caller, or has expired is a -32602 *Error.
func (r *MethodRequest) OpenCursor(cursor string) ([]byte, error) {
	x := r.x
	p, e := x.s.state.openState(cursor, cursorMethod(r.Method), nil, x.statePrincipal())
	if e != nil {
		return nil, InvalidParams("Invalid params: the cursor failed verification, has expired, or belongs to another list or caller; list again without a cursor")
	}
	return p.user, nil
}

// cursorMethod keeps sealed cursors apart from sealed requestStates.
func cursorMethod(method string) string { return "cursor\x00" + method }
