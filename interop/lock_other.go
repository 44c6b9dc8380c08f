//go:build !unix

package interop

// lockCache is a no-op where flock is not available.
func lockCache(cache string) (func(), error) { return func() {}, nil }
