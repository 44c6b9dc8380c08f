//go:build unix

package interop

import (
	"os"
	"path/filepath"
	"syscall"
)

// lockCache takes the cache's install lock ($CACHE/.install.lock, the
// file scripts/lib.sh locks with flock) and returns its release.
func lockCache(cache string) (func(), error) {
	f, err := os.OpenFile(filepath.Join(cache, ".install.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
