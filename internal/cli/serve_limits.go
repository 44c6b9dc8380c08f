package cli

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// The default cap on subscriptions/listen streams of `mcpkit serve`.
// Each stream holds one open file (its connection), so a process can hold
// at most its RLIMIT_NOFILE of them; each also costs memory (about 4 KiB of
// server RSS measured, plus the kernel's socket buffers), so a host that
// allows a million open files must not get a million-stream default. The
// CLI's default is the lower of the two limits below; the library's own
// default (mcp.ListenOptions.MaxSubscriptions) stays 10,000, since a
// library cannot know what else its process holds.
const (
	// fileHeadroomMin and fileHeadroomDiv keep back max(256, limit/20) of
	// the file limit for everything that is not a listen stream: ordinary
	// requests, the listener, Redis, logs, the binary's own files.
	fileHeadroomMin = 256
	fileHeadroomDiv = 20
	// streamMemBudget is the memory a listen stream is allowed in the
	// memory-derived limit: server RSS (about 4 KiB measured) plus the
	// kernel's socket buffers of both ends on loopback, with room to
	// spare; memShareDiv says that listen streams may take a quarter of
	// the memory.
	streamMemBudget = 32 << 10
	memShareDiv     = 4
	// minDerivedSubscriptions is the floor of the derived default: a
	// tiny file limit still leaves a few streams (and the cap is then
	// reached with a clear 503, not with accept errors).
	minDerivedSubscriptions = 16
)

// subscriptionLimit is the derived default and why.
type subscriptionLimit struct {
	N        int    // the cap
	FileCap  int    // from the file limit (0: unknown)
	MemCap   int    // from memory (0: unknown)
	Source   string // "file limit", "memory" or "fallback"
	NoFile   uint64 // the file limit read (0: unknown)
	MemBytes uint64 // the memory read (0: unknown)
}

// fallbackSubscriptions is the cap when neither limit can be read: the
// library default.
const fallbackSubscriptions = 10000

// deriveSubscriptionLimit computes the default cap from the process's
// file limit nofile and the memory memBytes it may use (0: unknown).
func deriveSubscriptionLimit(nofile, memBytes uint64) subscriptionLimit {
	l := subscriptionLimit{NoFile: nofile, MemBytes: memBytes}
	const maxInt = int(^uint(0) >> 1)
	clamp := func(v uint64) int {
		if v > uint64(maxInt) {
			return maxInt
		}
		return max(int(v), minDerivedSubscriptions)
	}
	if nofile > 0 {
		head := max(uint64(fileHeadroomMin), nofile/fileHeadroomDiv)
		var v uint64
		if nofile > head {
			v = nofile - head
		}
		l.FileCap = clamp(v)
	}
	if memBytes > 0 {
		l.MemCap = clamp(memBytes / memShareDiv / streamMemBudget)
	}
	switch {
	case l.FileCap == 0 && l.MemCap == 0:
		l.N, l.Source = fallbackSubscriptions, "fallback"
	case l.MemCap == 0 || (l.FileCap != 0 && l.FileCap <= l.MemCap):
		l.N, l.Source = l.FileCap, "file limit"
	default:
		l.N, l.Source = l.MemCap, "memory"
	}
	return l
}

// memoryLimit returns the memory this process may use: the cgroup (v2,
// then v1) limit when there is one below the physical memory, else
// MemTotal of /proc/meminfo; 0 when none can be read.
func memoryLimit() uint64 {
	total := memTotal()
	for _, f := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		v, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
		if err != nil || v == 0 { // "max": no limit
			continue
		}
		if total == 0 || v < total {
			return v
		}
	}
	return total
}

func memTotal() uint64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := bytes.CutPrefix(sc.Bytes(), []byte("MemTotal:")); ok {
			fields := strings.Fields(string(rest))
			if len(fields) == 2 && fields[1] == "kB" {
				if v, err := strconv.ParseUint(fields[0], 10, 64); err == nil {
					return v << 10
				}
			}
		}
	}
	return 0
}

// describe is the startup log's account of the derivation.
func (l subscriptionLimit) describe() string {
	unknown := func(v int) string {
		if v == 0 {
			return "unknown"
		}
		return strconv.Itoa(v)
	}
	return fmt.Sprintf("from the %s (file limit %d leaves %s; memory %d MiB leaves %s)",
		l.Source, l.NoFile, unknown(l.FileCap), l.MemBytes>>20, unknown(l.MemCap))
}
