package skills

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"io/fs"
	"path"
	"time"
)

// Equal reports whether s and t serve the same skills: the same entries
// (URIs, frontmatter, digests and sizes) and the same media types.
func (s *Set) Equal(t *Set) bool {
	if s == nil || t == nil {
		return s == t
	}
	if len(s.skills) != len(t.skills) || len(s.dirs) != len(t.dirs) {
		return false
	}
	for i, a := range s.skills {
		b := t.skills[i]
		if !bytes.Equal(a.entry, b.entry) {
			return false
		}
		for j, f := range a.Files {
			if f.MIMEType != b.Files[j].MIMEType || f.Text != b.Files[j].Text {
				return false
			}
		}
	}
	for u, d := range s.dirs {
		e, ok := t.dirs[u]
		if !ok || len(d) != len(e) {
			return false
		}
		for i := range d {
			if d[i].URI != e[i].URI || d[i].IsDir() != e[i].IsDir() {
				return false
			}
		}
	}
	return true
}

// Watch polls fsys every interval (one second when interval is not
// positive) until ctx is done, and calls changed whenever the skills in it
// change, starting from current (which may be nil). Any fs.FS works: each
// poll compares the names, types, sizes and modification times of
// everything Load would look at, and only when they differ loads the skills
// again and compares the result with the last one, so that changed is
// called only for a real change.
//
// changed receives Load's results: a new Set, with the error of the skills
// it refused (nil when there were none), or, when Load failed as a whole, a
// nil Set and the error; the last good Set then stays current. Watch calls
// changed from its own goroutine, one call at a time.
func Watch(ctx context.Context, fsys fs.FS, opts *Options, interval time.Duration, current *Set, changed func(*Set, error)) {
	if interval <= 0 {
		interval = time.Second
	}
	// The first poll always loads, so that a change between the Load that
	// gave current and this call is not missed.
	var last [32]byte
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		fp := fingerprint(fsys)
		if fp == last {
			continue
		}
		last = fp
		set, err := Load(fsys, opts)
		if set == nil {
			changed(nil, err)
			continue
		}
		if set.Equal(current) && err == nil {
			continue
		}
		current = set
		changed(set, err)
	}
}

// fingerprint hashes the metadata of every entry below the root of fsys
// that Load can look at, links followed to what they point to.
func fingerprint(fsys fs.FS) [32]byte {
	h := sha256.New()
	var num [8]byte
	put := func(v int64) {
		binary.LittleEndian.PutUint64(num[:], uint64(v))
		h.Write(num[:])
	}
	var walk func(dir string, depth int)
	walk = func(dir string, depth int) {
		entries, err := fs.ReadDir(fsys, dir)
		if err != nil {
			h.Write([]byte("\x00error " + dir + "\x00"))
			return
		}
		for _, e := range entries {
			if hidden(e.Name()) {
				continue
			}
			p := path.Join(dir, e.Name())
			h.Write([]byte(p))
			h.Write([]byte{0})
			info, err := e.Info()
			if err == nil {
				put(int64(info.Mode()))
				put(info.Size())
				put(info.ModTime().UnixNano())
			}
			if e.Type()&fs.ModeSymlink != 0 {
				if info, err := fs.Stat(fsys, p); err == nil {
					put(int64(info.Mode()))
					put(info.Size())
					put(info.ModTime().UnixNano())
				}
			}
			if e.IsDir() && depth < MaxDepth { // what Load reads
				walk(p, depth+1)
			}
		}
	}
	walk(".", 0)
	var out [32]byte
	h.Sum(out[:0])
	return out
}
