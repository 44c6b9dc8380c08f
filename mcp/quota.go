package mcp

import (
	"encoding/json"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpkit/mcpkit/internal/admission"
	"github.com/mcpkit/mcpkit/jsonrpc"
)

// QuotaOptions sets the per-client quotas and the server-wide in-flight
// byte budget of Streamable HTTP (docs/security.md lists every bound). The
// global caps (Tasks.MaxRunning, Listen.MaxSubscriptions,
// Legacy.MaxSessions) stay as the last line; the quotas keep one client
// from taking all of them. A client is the authenticated principal (issuer
// and subject) when the request carries one, and otherwise the remote
// address (see TrustedProxies). stdio serves one client and has no quotas.
//
// A request past a quota gets HTTP 429 with Retry-After and the JSON-RPC
// error -32603 "Quota exceeded", whose data names the quota and its limit:
// {"quota":"maxSubscriptionsPerClient","limit":2000}.
type QuotaOptions struct {
	// Disable turns the per-client quotas off (the in-flight byte budget
	// stays).
	Disable bool
	// MaxTasksPerClient bounds the tasks one client has running at once.
	// Default 250 (a quarter of Tasks.MaxRunning's default). Off removes
	// it.
	MaxTasksPerClient int
	// MaxSubscriptionsPerClient bounds the subscriptions/listen streams one
	// client has open at once. Default 2500. Off removes it.
	MaxSubscriptionsPerClient int
	// MaxSessionsPerClient bounds the live legacy HTTP sessions one client
	// has opened (initialize). Default 2500. Off removes it.
	MaxSessionsPerClient int
	// TrustedProxies are the addresses of the load balancers and reverse
	// proxies in front of the server. A request from one of them is
	// attributed to the address it reports in X-Forwarded-For: the
	// rightmost entry that is not itself a trusted proxy. A request from
	// any other address is attributed to that address, and its
	// X-Forwarded-For is ignored, since a client can write anything
	// there. Default: none. Behind a load balancer, set it, or every
	// client shares the balancer's address and quota.
	TrustedProxies []netip.Prefix
	// IPv6Prefix is the length of the IPv6 prefix whose addresses are one
	// client: a host is commonly given a whole /64, so counting each of
	// its addresses (or zones) apart would multiply its quotas by 2^64.
	// Default 64. Off (or 128) makes each address its own client; a value
	// above 128 makes NewServer panic. IPv4 clients are single addresses.
	IPv6Prefix int
	// MaxInFlightBytes bounds the total size of the HTTP request bodies
	// being handled and responses being written at once, server-wide,
	// counting those of 64 KiB or more. A request that would pass it is
	// shed with 503, Retry-After and the JSON-RPC error -32603 "Server
	// busy". Default 256 MiB (64 requests of the default
	// MaxMessageBytes). Off removes it.
	MaxInFlightBytes int64
	// MaxResponseBytes bounds one encoded response, of either era and
	// with or without interceptors (which see the error as the call's
	// Outcome): a result that encodes to more (a tool echoing 4 MiB of
	// invalid UTF-8 grows sixfold as escapes) is replaced with the error
	// -32603 "Response too large", data
	// {"quota":"maxResponseBytes","limit":N}.
	// Default 16 MiB. Off removes it.
	MaxResponseBytes int
	// MaxInFlightRequests bounds the HTTP requests being handled at once,
	// server-wide, so that offered load past capacity is shed early
	// (before the body is read) instead of queueing until every request
	// is late: a request that would pass it gets 503, Retry-After and the
	// JSON-RPC error -32603 "Server busy" with data
	// {"quota":"maxInFlightRequests","limit":N}. subscriptions/listen
	// streams count only until they are known to be one (they are held
	// by MaxSubscriptions instead); tasks count while their call is
	// answered, not while they run. It is the ceiling of the adaptive
	// limit (MaxQueueDelay), which sheds below it when requests queue for
	// the CPU. Default 1024; size it as the throughput to sustain times
	// the latency to allow (Little's law: 2,000 calls/s of 50 ms each
	// need 100), see docs/scaling.md. Off removes it (and the adaptive
	// limit with it).
	MaxInFlightRequests int
	// MaxQueueDelay is the target of the adaptive in-flight limit, which
	// sheds early when requests queue for the CPU: a fixed count cannot
	// serve both CPU-bound handlers (1 ms of CPU each on 2 cores: past a
	// few per core, more in flight only adds queueing, and 1024 of them
	// wait about 0.5 s) and handlers that wait (a 50 ms backend call needs
	// many in flight and no CPU). So under MaxInFlightRequests the server
	// keeps a limit that it adjusts every 10 ms from the Go scheduler's
	// latency (runtime/metrics /sched/latencies:seconds: how long runnable
	// goroutines wait for a CPU), which handlers that wait do not raise.
	// When its 90th percentile stays above MaxQueueDelay for 30 ms while
	// at least half as many goroutines wait for a CPU as requests are in
	// flight (so that fewer requests would shorten the queue), the limit
	// drops to 3/4 of the requests then in flight or of the goroutines
	// waiting for a CPU, whichever is more, and on while that lasts, down
	// to a floor (twice GOMAXPROCS, at least 4, at most
	// MaxInFlightRequests); while the delay is under half of it and
	// requests reach the limit, the limit grows by a quarter per 10 ms,
	// up to MaxInFlightRequests. A request past the limit gets the 503 of
	// MaxInFlightRequests, its data naming the limit then in force.
	//
	// The queue may be in front of admission: with few CPUs and handlers
	// that only compute, each handler runs to its end before the next
	// connection's goroutine gets a CPU, so one or two requests are in
	// flight while the rest wait runnable to reach ServeHTTP, where no
	// count of requests in flight can see them. So the limit also bounds
	// the goroutines waiting for a CPU (runtime/metrics
	// /sched/goroutines/runnable, read every 10 ms): once the delay has
	// cut the limit, when the fewest of them over the last 30 ms are past
	// it, that many of the requests entering next, the ones that waited
	// longest, get the same 503 before their body is read or decoded, so
	// that the CPU goes to requests that can still be answered in time.
	//
	// The delay is the whole process's: CPU taken by other work in the
	// process (or, on a starved host, by other processes) sheds requests
	// too, as long as goroutines of the process wait for it. Default
	// 5 ms. Off keeps the limit at MaxInFlightRequests and sheds nothing
	// for the goroutines waiting.
	MaxQueueDelay time.Duration
}

// The quotas a client may exceed, by their names in error data.
const (
	quotaTasks = iota
	quotaSubscriptions
	quotaSessions
	numQuotas
)

var quotaNames = [numQuotas]string{"maxTasksPerClient", "maxSubscriptionsPerClient", "maxSessionsPerClient"}

// countedBytes is the least size of a request body or response that the
// in-flight byte budget counts.
const countedBytes = 64 << 10

// quotaRetryAfter is the Retry-After, in seconds, of 429 and 503 answers.
const quotaRetryAfter = "1"

// quotas counts what each client holds. Only the operations that take a
// held resource (a task, a listen stream, a legacy session) touch it, never
// an ordinary request: server/discover and tools/call pay nothing.
type quotas struct {
	off     bool
	limits  [numQuotas]int // Off: unlimited
	trusted []netip.Prefix
	v6bits  int // IPv6Prefix: the bits of an IPv6 address that name a client

	mu     sync.Mutex
	counts map[string]*[numQuotas]int32
	// released is closed (and cleared) by each release, so that a waiter
	// learns of it without polling; made on demand by releasedChan.
	released chan struct{}

	maxInFlight int64 // Off: unlimited
	maxResponse int   // Off: unlimited
	inFlight    atomic.Int64

	maxRequests  int64 // Off: unlimited
	requests     atomic.Int64
	busyRequests *Error // the 503 past maxRequests, naming the limit

	// adapt is the adaptive in-flight limit; nil when off.
	adapt *admission.Limit
}

func (q *quotas) init(o *QuotaOptions) {
	q.off = o.Disable
	q.limits = [numQuotas]int{
		offSetting(o.MaxTasksPerClient, 250),
		offSetting(o.MaxSubscriptionsPerClient, 2500),
		offSetting(o.MaxSessionsPerClient, 2500),
	}
	q.trusted = append([]netip.Prefix(nil), o.TrustedProxies...)
	if o.IPv6Prefix > 128 {
		panic("mcp.NewServer: Quotas.IPv6Prefix is " + strconv.Itoa(o.IPv6Prefix) + ", more than the 128 bits of an IPv6 address")
	}
	q.v6bits = offSetting(o.IPv6Prefix, defaultIPv6Prefix)
	if q.v6bits < 0 {
		q.v6bits = 128
	}
	q.counts = map[string]*[numQuotas]int32{}
	q.maxInFlight = offSetting(o.MaxInFlightBytes, 256<<20)
	q.maxResponse = offSetting(o.MaxResponseBytes, 16<<20)
	q.maxRequests = int64(offSetting(o.MaxInFlightRequests, defaultMaxInFlightRequests))
	q.busyRequests = &Error{
		Code:    jsonrpc.CodeInternalError,
		Message: "Server busy: too many requests in flight; retry later",
		Data:    json.RawMessage(`{"quota":"maxInFlightRequests","limit":` + strconv.FormatInt(q.maxRequests, 10) + `}`),
		status:  http.StatusServiceUnavailable,
	}
	if target := offSetting(o.MaxQueueDelay, defaultMaxQueueDelay); target > 0 && q.maxRequests > 0 {
		q.adapt = admission.New(q.maxRequests, target)
	}
}

// defaultIPv6Prefix is QuotaOptions.IPv6Prefix's default.
const defaultIPv6Prefix = 64

// defaultMaxInFlightRequests is QuotaOptions.MaxInFlightRequests' default.
const defaultMaxInFlightRequests = 1024

// defaultMaxQueueDelay is QuotaOptions.MaxQueueDelay's default.
const defaultMaxQueueDelay = 5 * time.Millisecond

// enter takes one of the in-flight slots, reporting false when none is
// free; a true enter is followed by exit. The refusal is busyError.
func (q *quotas) enter() bool {
	if q.maxRequests < 0 {
		return true
	}
	limit := q.maxRequests
	if a := q.adapt; a != nil {
		a.Tick(q.requests.Load())
		if a.ShedQueued() {
			// Goroutines waiting for a CPU stand past the limit in
			// front of admission (internal/admission): this request
			// waited among them.
			a.Shed()
			return false
		}
		limit = a.Current()
	}
	if q.requests.Add(1) > limit {
		q.requests.Add(-1)
		if a := q.adapt; a != nil {
			a.Shed()
		}
		return false
	}
	return true
}

// busyError is the 503 of a request that enter refused: it names the
// limit in force.
func (q *quotas) busyError() *Error {
	a := q.adapt
	if a == nil {
		return q.busyRequests
	}
	l := a.Current()
	if l >= q.maxRequests {
		return q.busyRequests
	}
	return &Error{
		Code:    jsonrpc.CodeInternalError,
		Message: "Server busy: requests are queueing for the CPU; retry later",
		Data:    json.RawMessage(`{"quota":"maxInFlightRequests","limit":` + strconv.FormatInt(l, 10) + `}`),
		status:  http.StatusServiceUnavailable,
	}
}

func (q *quotas) exit() {
	if q.maxRequests >= 0 {
		q.requests.Add(-1)
	}
}

// boundResponse returns err, or, when err is nil and the response of n
// bytes is past MaxResponseBytes, the error that replaces it. Every path
// that runs a method handler passes its response through it: modern and
// legacy era, with and without interceptors.
func (q *quotas) boundResponse(n int, err error) error {
	if err == nil && q.maxResponse >= 0 && n > q.maxResponse {
		return q.responseTooLarge(n)
	}
	return err
}

// responseTooLarge is the error that replaces a response of n bytes past
// MaxResponseBytes.
func (q *quotas) responseTooLarge(n int) *Error {
	return &Error{
		Code:    jsonrpc.CodeInternalError,
		Message: "Response too large: the result encodes to " + strconv.Itoa(n) + " bytes, more than this server sends (" + strconv.Itoa(q.maxResponse) + ")",
		Data:    json.RawMessage(`{"quota":"maxResponseBytes","limit":` + strconv.Itoa(q.maxResponse) + `}`),
	}
}

// take counts one more held resource of kind for client, or fails with the
// 429 quota error. client "" (stdio, in-process) is not counted.
func (q *quotas) take(kind int, client string) error {
	if q.off || client == "" || q.limits[kind] < 0 {
		return nil
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	c := q.counts[client]
	if c == nil {
		c = new([numQuotas]int32)
		q.counts[client] = c
	}
	if int(c[kind]) >= q.limits[kind] {
		return quotaError(kind, q.limits[kind])
	}
	c[kind]++
	return nil
}

// release returns what take counted. The client's entry goes once it holds
// nothing, so that the map does not grow with every address ever seen.
func (q *quotas) release(kind int, client string) {
	if q.off || client == "" || q.limits[kind] < 0 {
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	c := q.counts[client]
	if c == nil {
		return
	}
	c[kind]--
	if *c == ([numQuotas]int32{}) {
		delete(q.counts, client)
	}
	if q.released != nil {
		close(q.released)
		q.released = nil
	}
}

// releasedChan returns a channel that is closed at the next release (for
// tests, which wait on it instead of polling).
func (q *quotas) releasedChan() <-chan struct{} {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.released == nil {
		q.released = make(chan struct{})
	}
	return q.released
}

// held returns what client holds of kind (for tests).
func (q *quotas) held(kind int, client string) int {
	q.mu.Lock()
	defer q.mu.Unlock()
	if c := q.counts[client]; c != nil {
		return int(c[kind])
	}
	return 0
}

func quotaError(kind, limit int) *Error {
	return &Error{
		Code:    jsonrpc.CodeInternalError,
		Message: "Quota exceeded: this client may hold at most " + strconv.Itoa(limit) + " " + quotaWhat[kind] + " at once; retry later",
		Data:    json.RawMessage(`{"quota":"` + quotaNames[kind] + `","limit":` + strconv.Itoa(limit) + `}`),
		status:  http.StatusTooManyRequests,
	}
}

var quotaWhat = [numQuotas]string{"running tasks", "subscriptions/listen streams", "legacy sessions"}

// errBusy sheds a request past the in-flight byte budget.
var errBusy = &Error{
	Code:    jsonrpc.CodeInternalError,
	Message: "Server busy: too many request bytes in flight; retry later",
	Data:    json.RawMessage(`{"quota":"maxInFlightBytes"}`),
	status:  http.StatusServiceUnavailable,
}

// admit reserves n bytes of the in-flight budget, reporting false when
// that would pass it; a true admit is followed by unadmit(n).
func (q *quotas) admit(n int64) bool {
	if q.maxInFlight < 0 {
		return true
	}
	if q.inFlight.Add(n) > q.maxInFlight && n > 0 {
		q.inFlight.Add(-n)
		return false
	}
	return true
}

// charge counts n bytes in flight without a check (a response already
// built); it is followed by unadmit(n).
func (q *quotas) charge(n int64) {
	if q.maxInFlight >= 0 {
		q.inFlight.Add(n)
	}
}

func (q *quotas) unadmit(n int64) {
	if q.maxInFlight >= 0 {
		q.inFlight.Add(-n)
	}
}

// clientKey names the client of a request for the quotas: its principal,
// or its address (an IPv6 address by its IPv6Prefix, without its zone).
func (q *quotas) clientKey(p *Principal, remoteAddr string, h http.Header) string {
	if p != nil {
		return "p " + p.Issuer + " " + p.Subject
	}
	if remoteAddr == "" {
		return ""
	}
	a, _ := q.clientAddr(remoteAddr, h)
	if a.Is6() {
		a = a.WithZone("")
		if q.v6bits < 128 {
			if pfx, err := a.Prefix(q.v6bits); err == nil {
				return "a " + pfx.String()
			}
		}
	}
	return "a " + a.String()
}

// clientAddr is the client's address: the peer's, or, when the peer is a
// trusted proxy, the rightmost X-Forwarded-For entry that is not one
// (forwarded reports that it is not the peer's own).
func (q *quotas) clientAddr(remoteAddr string, h http.Header) (addr netip.Addr, forwarded bool) {
	peer, err := netip.ParseAddr(peerHost(remoteAddr))
	if err != nil {
		return netip.Addr{}, false
	}
	peer = peer.Unmap()
	if !q.isTrusted(peer) {
		return peer, false
	}
	xff := h.Values("X-Forwarded-For")
	for i := len(xff) - 1; i >= 0; i-- {
		parts := strings.Split(xff[i], ",")
		for j := len(parts) - 1; j >= 0; j-- {
			a, err := netip.ParseAddr(strings.TrimSpace(parts[j]))
			if err != nil {
				return peer, forwarded // a malformed entry: nothing left of it can be trusted
			}
			a = a.Unmap()
			if !q.isTrusted(a) {
				return a, true
			}
			peer, forwarded = a, true
		}
	}
	return peer, forwarded
}

func (q *quotas) isTrusted(a netip.Addr) bool {
	for _, p := range q.trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// RateLimited returns the error of a request past a rate limit, answered
// as a request past a per-client quota is (QuotaOptions): JSON-RPC -32603
// with message msg and data (conventionally an object naming the limit,
// {"quota":"rateLimit",...}), sent on Streamable HTTP with status 429
// and Retry-After: retryAfter in whole seconds, rounded up, at least 1.
// On stdio and in a legacy session (whose responses are all 200) only the
// JSON-RPC error is sent.
func RateLimited(msg string, data any, retryAfter time.Duration) *Error {
	return &Error{Code: jsonrpc.CodeInternalError, Message: msg, Data: data, status: http.StatusTooManyRequests, retryAfter: max(retryAfter, time.Second)}
}

// retryAfterSeconds is d as a Retry-After value: whole seconds, rounded
// up, at least 1.
func retryAfterSeconds(d time.Duration) string {
	return strconv.FormatInt(max(1, int64((d+time.Second-1)/time.Second)), 10)
}

// setRetryAfter adds Retry-After to a 429 or 503 answer.
func setRetryAfter(h http.Header, status int) {
	if status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable {
		if _, ok := h["Retry-After"]; !ok {
			h["Retry-After"] = []string{quotaRetryAfter}
		}
	}
}
