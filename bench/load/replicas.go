package load

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/mcpkit/mcpkit/bench/servers"
)

// ReplicaScale is one run of the replicas case: Replicas mcpkit server
// processes sharing one Redis, PerReplica idle subscriptions/listen streams
// on each (clients connected to the replicas directly), and Changes tool
// list changes, each made on one replica (in turn) and checked to reach
// every stream of every replica exactly once.
type ReplicaScale struct {
	Replicas, PerReplica, Changes int
	// P50, P99 and Max are the delivery times over every stream of every
	// change: from sending the tools/call of touch to one replica to the
	// stream's reading its notifications/tools/list_changed.
	P50, P99, Max time.Duration
	// Local and Remote split them: streams on the replica the change was
	// made on, and streams on the others (whose notification crossed Redis).
	Local, Remote Percentiles
	// LocalFirst and RemoteFirst are the medians over the changes of the
	// time to the first stream notified on the changed replica and on the
	// others: RemoteFirst less LocalFirst is what crossing Redis costs,
	// the rest of P99 is fan-out.
	LocalFirst, RemoteFirst time.Duration
	// RedisRTT is the median round trip of a PING to the Redis server from
	// the harness (50 of them, before the changes).
	RedisRTT time.Duration
	// RedisHop is the median time from sending the tools/call of touch to
	// the harness's own subscriber on the replicas' channel receiving the
	// change: the touch handler, the leading-edge publish and the Redis
	// PUBLISH, without any fan-out.
	RedisHop time.Duration
	// Open is the time it took to open every stream (the replicas in
	// parallel, the streams of one replica one after another).
	Open time.Duration
	// HarnessCPUPerChange is the harness's own CPU time per change (the
	// median): reading and checking every stream's notification. It
	// shares the machine with the replicas.
	HarnessCPUPerChange time.Duration
	// PerChange holds the times of each change, in order.
	PerChange []ReplicaChange
	// Replica holds the figures of each replica.
	Replica []ReplicaFigures
}

// ReplicaChange is one change of a ReplicaScale, timed from sending its
// tools/call of touch.
type ReplicaChange struct {
	Replica int // the replica it was made on, from 1
	// Answered is when the touch call's answer was read; Redis when the
	// harness's subscriber got the change; LocalFirst and RemoteFirst
	// when the first stream on the changed replica and on another was
	// notified; Last when the last stream was.
	Answered, Redis, LocalFirst, RemoteFirst, Last time.Duration
}

// Percentiles are the p50, p99 and maximum of a set of durations.
type Percentiles struct{ P50, P99, Max time.Duration }

// ReplicaFigures are one replica's figures in a ReplicaScale.
type ReplicaFigures struct {
	// RSSPerStream is the growth of the replica's VmRSS from no stream to
	// PerReplica streams, divided by PerReplica (bytes).
	RSSPerStream int64
	// Local and Remote are the delivery times to this replica's streams
	// for the changes made on this replica and on the others.
	Local, Remote Percentiles
	// CPUPerChange is the replica's CPU time per change (the median over
	// the changes), the fan-out to its streams included.
	CPUPerChange time.Duration
}

// replicaChannel is the Redis pub/sub channel the replicas share: the
// default of mcpkit/redis.BusOptions.Channel.
const replicaChannel = "mcpkit:changes"

// ReplicaFileMargin is the number of open files the harness needs besides
// one per listen stream: the touch connections, the Redis clients, the
// servers' pipes, the Go runtime's own.
const ReplicaFileMargin = 100

// RaiseFileLimit sets the soft limit on open files to the hard limit (the
// Go runtime does so at start already on Linux; this checks it) and
// reports an error when it is still below need.
func RaiseFileLimit(need int) error {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
		return fmt.Errorf("reading the open-file limit: %w", err)
	}
	if r.Cur < r.Max {
		r.Cur = r.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
			return fmt.Errorf("raising the open-file limit to %d: %w", r.Max, err)
		}
	}
	if r.Cur < uint64(need) {
		return fmt.Errorf("the harness needs %d open files (one per listen stream and %d more) and may hold %d (hard limit %d): open fewer streams", need, ReplicaFileMargin, r.Cur, r.Max)
	}
	return nil
}

// MeasureReplicas starts replicas server processes (argv, as for Start,
// with -touch and -redis redisURL added) sharing the Redis at redisURL
// (r, for the round trips), opens perReplica listen streams on each, one
// connection each (subscription ids 1 to replicas*perReplica, unique over
// the replicas), and triggers changes tool list changes one at a time,
// change k by a tools/call of touch on replica k mod replicas. Each change
// must reach every stream of every replica exactly once, with the stream's
// own subscriptionId, within 30 s: a missed or duplicated notification is
// an error, not a figure. Every process is stopped when it returns.
func MeasureReplicas(argv []string, r *Redis, replicas, perReplica, changes int) (_ ReplicaScale, err error) {
	out := ReplicaScale{Replicas: replicas, PerReplica: perReplica, Changes: changes}
	impl := servers.Mcpkit
	if replicas < 1 || perReplica < 1 || changes < 1 {
		return out, errors.New("replicas, streams per replica and changes must be positive")
	}
	total := replicas * perReplica
	if err := RaiseFileLimit(total + ReplicaFileMargin); err != nil {
		return out, err
	}
	procs := make([]*Proc, replicas)
	defer func() {
		// A replica that died, or logged a warning, says so.
		for i, p := range procs {
			if p == nil || err == nil {
				continue
			}
			select {
			case <-p.waited:
				err = fmt.Errorf("%w; replica %d exited: %v%s", err, i+1, p.cmd.ProcessState, p.stderr.suffix())
			default:
				if s := p.stderr.suffix(); s != "" {
					err = fmt.Errorf("%w; replica %d%s", err, i+1, s)
				}
			}
		}
	}()
	defer func() {
		for _, p := range procs {
			if p != nil {
				p.Stop()
			}
		}
	}()
	for i := range procs {
		p, err := Start(append(slices.Clone(argv), "-touch", "-redis", r.URL), impl, HTTP)
		if err != nil {
			return out, fmt.Errorf("replica %d: %w", i+1, err)
		}
		procs[i] = p
	}
	time.Sleep(100 * time.Millisecond)
	rss0 := make([]int64, replicas)
	for i, p := range procs {
		var err error
		if rss0[i], err = ProcRSS(p.Pid()); err != nil {
			return out, err
		}
	}

	// The harness's own subscriber: when each change crossed Redis.
	rdb := goredis.NewClient(&goredis.Options{Addr: r.Addr})
	defer rdb.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ps := rdb.Subscribe(ctx, replicaChannel)
	defer ps.Close()
	if _, err := ps.Receive(ctx); err != nil { // the subscription's confirmation
		return out, fmt.Errorf("subscribing to %s: %w", replicaChannel, err)
	}
	published := make(chan time.Time, 4*changes)
	go func() {
		for range ps.Channel() {
			select {
			case published <- time.Now():
			default:
			}
		}
	}()

	// The streams, on the replicas in parallel.
	streams := make([][]*listenStream, replicas)
	defer func() {
		for _, ss := range streams {
			for _, s := range ss {
				s.conn.Close()
			}
		}
	}()
	t0 := time.Now()
	errs := make([]error, replicas)
	var wg sync.WaitGroup
	for i, p := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			u, err := url.Parse(p.URL)
			if err != nil {
				errs[i] = err
				return
			}
			for k := range perReplica {
				id := i*perReplica + k + 1
				s, err := openListener(u, impl, id)
				if err != nil {
					errs[i] = fmt.Errorf("replica %d, subscriptions/listen stream %d: %w", i+1, id, err)
					return
				}
				streams[i] = append(streams[i], s)
			}
		}()
	}
	wg.Wait()
	out.Open = time.Since(t0)
	if err := errors.Join(errs...); err != nil {
		return out, err
	}
	time.Sleep(300 * time.Millisecond) // let the servers settle
	out.Replica = make([]ReplicaFigures, replicas)
	for i, p := range procs {
		rss, err := ProcRSS(p.Pid())
		if err != nil {
			return out, err
		}
		out.Replica[i].RSSPerStream = (rss - rss0[i]) / int64(perReplica)
	}
	rtts, err := r.RoundTrips(50)
	if err != nil {
		return out, fmt.Errorf("Redis PING: %w", err)
	}
	slices.Sort(rtts)
	out.RedisRTT = rtts[len(rtts)/2]

	// One reader per stream; a reader records when each notification came
	// (at[k] for change k) and counts them, and reports an error on errc.
	readers := make([]*replicaReader, 0, total)
	for _, ss := range streams {
		for _, s := range ss {
			readers = append(readers, &replicaReader{s: s, at: make([]time.Time, changes), want: listChangedFor(s.id)})
		}
	}
	tally := newReplicaTally()
	received, target, complete, errc := &tally.received, &tally.target, tally.complete, tally.errc
	stopReading, err := readStreams(readers, tally)
	if err != nil {
		return out, err
	}
	defer stopReading()
	touchers := make([]*httpConn, replicas)
	defer func() {
		for _, c := range touchers {
			if c != nil {
				c.close()
			}
		}
	}()
	for i, p := range procs {
		if touchers[i], err = newHTTPConnHeaders(p.URL, touchHeaders()); err != nil {
			return out, err
		}
	}

	var all, local, remote []time.Duration
	perLocal := make([][]time.Duration, replicas)
	perRemote := make([][]time.Duration, replicas)
	cpu := make([][]time.Duration, replicas)
	var hops, self, localFirsts, remoteFirsts []time.Duration
	replicaOf := func(id int) int { return (id - 1) / perReplica }
	for k := range changes {
		at := k % replicas
		cpu0 := make([]time.Duration, replicas)
		for i, p := range procs {
			if cpu0[i], err = ProcCPUPrecise(p.Pid()); err != nil {
				return out, err
			}
		}
		target.Store(int64(total * (k + 1)))
		if received.Load() >= int64(total*(k+1)) { // a notification before the change
			return out, fmt.Errorf("before change %d: %d notifications, want %d", k+1, received.Load(), total*k)
		}
		self0 := selfCPU()
		t0 := time.Now()
		status, msg, err := touchers[at].do(touchBody(k + 1))
		answered := time.Since(t0)
		if err == nil {
			err = checkTouch(status, msg, k+1)
		}
		if err != nil {
			return out, fmt.Errorf("replica %d: tools/call %s: %w", at+1, servers.TouchTool, err)
		}
		hop := time.Duration(-1)
		timeout := time.After(30 * time.Second)
		for all := false; !all || hop < 0; {
			select {
			case <-complete:
				all = true
			case err := <-errc:
				return out, err
			case p := <-published:
				if hop < 0 {
					hop = p.Sub(t0)
					hops = append(hops, hop)
				}
			case <-timeout:
				missing := make([]int, replicas)
				for _, rd := range readers {
					if rd.seen.Load() <= int32(k) {
						missing[replicaOf(rd.s.id)]++
					}
				}
				if hop < 0 {
					return out, fmt.Errorf("change %d (made on replica %d): not seen on Redis within 30s; listeners without it per replica: %v", k+1, at+1, missing)
				}
				return out, fmt.Errorf("change %d (made on replica %d): %d of %d listeners notified within 30s; missing per replica: %v", k+1, at+1, received.Load()-int64(total*k), total, missing)
			}
		}
		self = append(self, selfCPU()-self0)
		for i, p := range procs {
			c, err := ProcCPUPrecise(p.Pid())
			if err != nil {
				return out, err
			}
			cpu[i] = append(cpu[i], c-cpu0[i])
		}
		// Past the servers' 10 ms change window, every stream must have
		// exactly k+1 notifications: a duplicate (which made the count
		// complete early) fails here rather than in the next change.
		quiet := time.After(200 * time.Millisecond)
	drain:
		for {
			select {
			case err := <-errc:
				return out, err
			case <-published:
				// The same change published twice, or by two replicas: the
				// listeners' counts below are what counts.
			case <-quiet:
				break drain
			}
		}
		firstLocal, firstRemote := time.Duration(1<<62), time.Duration(1<<62)
		for _, rd := range readers {
			if n := rd.seen.Load(); n != int32(k+1) {
				return out, fmt.Errorf("change %d (made on replica %d): listener %d on replica %d has received %d notifications, want %d", k+1, at+1, rd.s.id, replicaOf(rd.s.id)+1, n, k+1)
			}
			d := rd.at[k].Sub(t0)
			all = append(all, d)
			if ri := replicaOf(rd.s.id); ri == at {
				local = append(local, d)
				perLocal[ri] = append(perLocal[ri], d)
				firstLocal = min(firstLocal, d)
			} else {
				remote = append(remote, d)
				perRemote[ri] = append(perRemote[ri], d)
				firstRemote = min(firstRemote, d)
			}
		}
		localFirsts = append(localFirsts, firstLocal)
		if replicas > 1 {
			remoteFirsts = append(remoteFirsts, firstRemote)
		}
		out.PerChange = append(out.PerChange, ReplicaChange{Replica: at + 1, Answered: answered, Redis: hop,
			LocalFirst: firstLocal, RemoteFirst: firstRemote, Last: slices.Max(all[len(all)-total:])})
	}
	p := percentiles(all)
	out.P50, out.P99, out.Max = p.P50, p.P99, p.Max
	out.Local, out.Remote = percentiles(local), percentiles(remote)
	slices.Sort(hops)
	out.RedisHop = hops[len(hops)/2]
	out.LocalFirst = percentiles(localFirsts).P50
	out.RemoteFirst = percentiles(remoteFirsts).P50
	slices.Sort(self)
	out.HarnessCPUPerChange = self[len(self)/2]
	for i := range out.Replica {
		out.Replica[i].Local = percentiles(perLocal[i])
		out.Replica[i].Remote = percentiles(perRemote[i])
		slices.Sort(cpu[i])
		out.Replica[i].CPUPerChange = cpu[i][len(cpu[i])/2]
	}
	return out, nil
}

// percentiles sorts ds and returns its p50, p99 and maximum (zero for no
// durations).
func percentiles(ds []time.Duration) Percentiles {
	if len(ds) == 0 {
		return Percentiles{}
	}
	slices.Sort(ds)
	at := func(q float64) time.Duration { return ds[min(len(ds)-1, int(q*float64(len(ds))))] }
	return Percentiles{P50: at(0.50), P99: at(0.99), Max: ds[len(ds)-1]}
}

// selfCPU is the harness process's CPU time so far (user and system).
func selfCPU() time.Duration {
	var u syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &u) != nil {
		return 0
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}

// replicaTally counts the notifications of every stream of a replicas
// run and collects the first error.
type replicaTally struct {
	received, target atomic.Int64
	complete         chan struct{} // a signal when received reaches target
	errc             chan error    // the first error
}

func newReplicaTally() *replicaTally {
	return &replicaTally{complete: make(chan struct{}, 1), errc: make(chan error, 1)}
}

func (t *replicaTally) count(n int) {
	for range n {
		if t.received.Add(1) == t.target.Load() {
			select {
			case t.complete <- struct{}{}:
			default:
			}
		}
	}
}

func (t *replicaTally) fail(id int, err error) {
	select {
	case t.errc <- fmt.Errorf("listener %d: %w", id, err):
	default:
	}
}

// replicaReader parses one listen stream of the replicas case.
type replicaReader struct {
	s    *listenStream
	want []byte      // the notification mcpkit sends, byte for byte
	at   []time.Time // when notification k came
	seen atomic.Int32
	line []byte // the start of a line whose end has not been read yet
}

// maxReplicaLine bounds an event line.
const maxReplicaLine = 4096

// listChangedFor is the notification a stream with subscription id id
// receives from mcpkit, as mcpkit writes it: the readers compare bytes
// first and decode only what differs (checkListChanged decides).
func listChangedFor(id int) []byte {
	return []byte(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":` + strconv.Itoa(id) + `}}}`)
}

// feed parses b, read from the stream at now: each notification is
// checked, stamped and counted; it returns how many there were. Lines
// other than data lines (event:, id:, keep-alive comments, blank lines)
// are skipped.
func (rd *replicaReader) feed(b []byte, now time.Time) (int, error) {
	n := 0
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			if len(rd.line)+len(b) > maxReplicaLine {
				return n, fmt.Errorf("an event line longer than %d bytes", maxReplicaLine)
			}
			rd.line = append(rd.line, b...)
			return n, nil
		}
		line := b[:i]
		if len(rd.line) > 0 {
			rd.line = append(rd.line, line...)
			line = rd.line
		}
		b = b[i+1:]
		d, ok := bytes.CutPrefix(bytes.TrimRight(line, "\r"), []byte("data:"))
		rd.line = rd.line[:0]
		if !ok {
			continue
		}
		if d = bytes.TrimSpace(d); !bytes.Equal(d, rd.want) {
			if err := checkListChanged(d, rd.s.id); err != nil {
				return n, err
			}
		}
		k := int(rd.seen.Load())
		if k >= len(rd.at) {
			return n, fmt.Errorf("%d notifications for %d changes", k+1, len(rd.at))
		}
		rd.at[k] = now
		rd.seen.Store(int32(k + 1))
		n++
	}
	return n, nil
}

// read reads the stream on a goroutine of its own until it ends (the
// portable reader; pollStreams reads many streams with fewer system calls
// and no goroutine each).
func (rd *replicaReader) read(t *replicaTally) {
	buf := make([]byte, 4096)
	for {
		k, err := rd.s.events.Read(buf)
		if k > 0 {
			n, ferr := rd.feed(buf[:k], time.Now())
			t.count(n)
			if ferr != nil {
				t.fail(rd.s.id, ferr)
				return
			}
		}
		if err != nil {
			t.fail(rd.s.id, fmt.Errorf("reading the stream: %w", err))
			return
		}
	}
}
