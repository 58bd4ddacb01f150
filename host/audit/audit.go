// Package audit writes the gateway's audit log: one JSON object per line
// (JSON Lines) for every tool call, resource read and prompt get the
// gateway handles, and for every request it refuses before any method runs
// (authentication, rate limit, unknown session).
//
// It is configured by the gateway's audit block:
//
//	audit { path = "/var/log/mcphost/audit.jsonl" }   # or "-" for stderr
//
// # Format
//
// Each line is a [Record], its fields in a fixed order, empty ones left
// out except "time", "event" and "outcome":
//
//	{"time":"2025-06-01T12:00:00.123Z","event":"tools/call","iss":"https://idp.example.com","sub":"alice","session":"c9683f6038903a14","server":"github","tool":"mcp__github__create_issue","decision":"allow","rule":"user scope, /etc/mcphost/config.hcl:12 allow mcp__github__*","outcome":"ok","duration_ms":182.5,"request_bytes":311,"response_bytes":1204,"remote":"192.0.2.7:51234"}
//
// A call that hooks or interceptors checked has their decisions, in the
// order they ran, after "rule" (see [Check]):
//
//	"checks":[{"name":"PreToolUse","kind":"hook","event":"tools/call/request","decision":"allow","ms":41.3},{"name":"guard","kind":"plugin","event":"tools/call/response","decision":"mutate","ms":0.21}]
//
// "time" is RFC 3339 in UTC with milliseconds, "duration_ms" is in
// milliseconds with microsecond precision. Keys are lower case and stable;
// new keys may be added. A record has no field for argument values,
// results, tokens, headers or session ids: what a call carried is described
// only by its size, and the session by [SessionRef].
//
// # Never blocking
//
// [Log.Write] is on the path of every call, so it never waits for I/O: it
// copies the record into a bounded in-memory queue (Options.Buffer records)
// and returns. A goroutine owned by the Log encodes the queued records and
// writes them in batches, flushing whenever the queue runs empty, so lines
// reach the file promptly.
//
// When the queue is full (the disk is slow or stuck), Write drops the
// record, so that the call goes on unaudited rather than waiting, and
// counts it ([Log.Dropped]). Records lost to a write error are counted too.
// As soon as it can write again, the Log adds one line saying how many
// records were lost since the previous such line:
//
//	{"time":"2025-06-01T12:00:01.000Z","event":"audit_dropped","dropped":17}
//
// so a gap in the log is visible in the log itself (records dropped after
// Close cannot be, and are only counted). A write error (a full disk) does
// not stop the Log: it keeps the first error for [Log.Err] and tries again
// with the next batch. A line torn by a failed write is ended by a newline
// before the next one, so that only that line is unreadable.
//
// [Log.Close] writes what is queued, waiting at most until its context is
// done. A gateway that must not serve unaudited calls can watch [Log.Dropped]
// and Err; this package never refuses a call itself.
package audit

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"
)

// Events: the Event of a Record.
const (
	EventToolCall     = "tools/call"
	EventResourceRead = "resources/read"
	EventPromptGet    = "prompts/get"
	// EventRefused is a request refused before any method ran: its token
	// was missing or invalid, it was rate limited, or its session unknown.
	EventRefused = "refused"
	// EventDropped is the line the Log itself writes after losing records;
	// see the package documentation.
	EventDropped = "audit_dropped"
)

// Decisions: the Decision of a Record, as the permissions package names
// them, DecisionUnknown and DecisionNone.
const (
	DecisionAllow = "allow"
	DecisionAsk   = "ask"
	DecisionDeny  = "deny"
	// DecisionUnknown is the decision of a call of a name that names no
	// tool (answered as an unknown tool; Outcome not_found): no rule was
	// consulted.
	DecisionUnknown = "unknown"
	// DecisionNone is the decision of a tool call that ended before the
	// permission rules were consulted: a changed definition not yet
	// approved (pin), an invalid request state.
	DecisionNone = "none"
)

// Outcomes: the Outcome of a Record.
const (
	OutcomeOK           = "ok"           // the call completed (a tool result with isError is still "ok")
	OutcomeError        = "error"        // the call failed: a JSON-RPC error, an upstream that did not answer
	OutcomeDenied       = "denied"       // the permission policy, or the user asked, said no
	OutcomeUnauthorized = "unauthorized" // no valid token (HTTP 401)
	OutcomeForbidden    = "forbidden"    // a valid token without the right to this (HTTP 403)
	OutcomeNotFound     = "not_found"    // unknown session, server, tool, resource or prompt
	OutcomeRateLimited  = "rate_limited" // HTTP 429
	OutcomeCancelled    = "cancelled"    // the client cancelled or went away
)

// Record is one audited event. The JSON keys are those of the struct tags;
// [Record.MarshalJSON] writes them, and encoding/json can read a line back
// into a Record (all but Duration, which it reads as "duration_ms").
//
// No field may hold a secret. In particular Reason is a short, fixed
// description of a class of failure chosen by the caller ("expired token",
// "missing scope mcp"), never text taken from the request, a token or an
// upstream's error message.
type Record struct {
	// Time is when the event ended. Zero means now: Write fills it in.
	Time time.Time `json:"time"`
	// Event is what happened: one of the Event constants, or another MCP
	// method name.
	Event string `json:"event"`
	// Issuer and Subject identify the principal: its token's iss and sub.
	// Both are empty when the gateway serves without authentication.
	Issuer  string `json:"iss,omitempty"`
	Subject string `json:"sub,omitempty"`
	// Session identifies the MCP session. It must be SessionRef(id), never
	// the session id itself: a session id is a bearer capability.
	Session string `json:"session,omitempty"`
	// Endpoint is the gateway's named endpoint the request came to (an
	// endpoint block: /mcp/NAME, serve --endpoint NAME); empty for the
	// whole gateway (/mcp).
	Endpoint string `json:"endpoint,omitempty"`
	// Server is the upstream server's name.
	Server string `json:"server,omitempty"`
	// Tool is what was called: the canonical mcp__SERVER__TOOL name, a
	// resource URI or a prompt name.
	Tool string `json:"tool,omitempty"`
	// Decision is the permission decision (allow, ask or deny), and Rule the
	// source of the rule or default mode behind it, e.g.
	// "user scope, /x/config.hcl:12 allow mcp__github__*".
	Decision string `json:"decision,omitempty"`
	Rule     string `json:"rule,omitempty"`
	// Checks are the hooks and interceptors that ran for the call, in the
	// order they ran, each with its decision (fixed words only: never a
	// reason or any other text a hook or an interceptor returned).
	Checks []Check `json:"checks,omitempty"`
	// Outcome is how it ended: one of the Outcome constants.
	Outcome string `json:"outcome"`
	// Status is the HTTP status of a refused request.
	Status int `json:"status,omitempty"`
	// Reason is a short fixed class of failure; see the type's documentation.
	Reason string `json:"reason,omitempty"`
	// Duration is how long the event took, written as "duration_ms".
	Duration time.Duration `json:"-"`
	// RequestBytes and ResponseBytes are the sizes of the JSON-RPC request
	// and response, the only trace of their content.
	RequestBytes  int `json:"request_bytes,omitempty"`
	ResponseBytes int `json:"response_bytes,omitempty"`
	// Remote is the client's network address.
	Remote string `json:"remote,omitempty"`
}

// Check is what a Record holds of one hook or interceptor that ran for the
// call: written as
//
//	{"name":"guard","kind":"plugin","event":"tools/call/request","decision":"mutate","ms":0.21}
//
// with "mode":"audit" for a check in audit mode (its decision is then
// what it would have done: would_deny, would_mutate). Every field is a
// configured name or a fixed word; none may hold a check's reason.
type Check struct {
	// Name is the check's configured name: an interceptor block's label,
	// or a hook's event (PreToolUse, ...).
	Name string `json:"name"`
	// Kind is hook, plugin, server or builtin.
	Kind string `json:"kind"`
	// Event is the event and the phase: "tools/call/request".
	Event string `json:"event"`
	// Decision is one of the CheckDecision constants.
	Decision string `json:"decision"`
	// Mode is "audit" for a check that only records what it would do, ""
	// for one that enforces.
	Mode string `json:"mode,omitempty"`
	// Duration is how long the check took, written as "ms" (milliseconds,
	// microsecond precision).
	Duration time.Duration `json:"-"`
}

// Decisions of a Check.
const (
	CheckPass        = "pass"
	CheckAllow       = "allow"
	CheckAsk         = "ask"
	CheckDeny        = "deny"
	CheckMutate      = "mutate"
	CheckError       = "error"
	CheckTimeout     = "timeout"
	CheckWouldDeny   = "would_deny"
	CheckWouldMutate = "would_mutate"
)

// CheckModeAudit is the Mode of a Check in audit mode.
const CheckModeAudit = "audit"

// CheckDecision returns d if it is one of the CheckDecision constants,
// else "other": what a Check records is a fixed word, whatever a caller
// passes.
func CheckDecision(d string) string {
	switch d {
	case CheckPass, CheckAllow, CheckAsk, CheckDeny, CheckMutate, CheckError, CheckTimeout, CheckWouldDeny, CheckWouldMutate:
		return d
	}
	return "other"
}

// MarshalJSON encodes r as one line of the audit log, without the newline.
func (r Record) MarshalJSON() ([]byte, error) {
	return appendRecord(nil, &r), nil
}

// SessionRef returns the reference to a session that a Record holds: the
// first 16 hexadecimal digits of the SHA-256 of id, or "" for "". It is
// stable, so one session's records can be found together, and it does not
// reveal the id, which lets whoever holds it use the session.
func SessionRef(id string) string {
	if id == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:8])
}

// DefaultBuffer is the number of records the queue holds when
// Options.Buffer is not set.
const DefaultBuffer = 4096

// Options configure a Log. Nil options mean the defaults.
type Options struct {
	// Buffer is the number of records that may wait to be written before
	// Write drops them. While the writer writes a batch of up to Buffer
	// records, as many more may wait, so at most twice Buffer records are
	// held in memory. OPTIONAL: zero or negative means DefaultBuffer.
	Buffer int
	// Now returns the current time, for records without one and for the
	// lines about dropped records. It is called concurrently. OPTIONAL:
	// nil means time.Now.
	Now func() time.Time
}

// A Log is an open audit log. Its methods may be called concurrently. A
// nil *Log is a log that is turned off: Write discards, Close does nothing.
type Log struct {
	name   string    // the path, for errors
	w      io.Writer // where lines go
	closer io.Closer // closed by the writer goroutine when it ends, or nil
	now    func() time.Time
	max    int

	mu     sync.Mutex
	queue  []Record // waiting for the writer; len ≤ max
	closed bool

	wake    chan struct{} // one token: the queue went from empty to not
	stop    chan struct{} // closed by Close
	done    chan struct{} // closed when the writer goroutine has ended
	aborted atomic.Bool   // Close gave up waiting: write nothing more

	dropped atomic.Uint64
	err     atomic.Pointer[error] // the first write error

	// Owned by the writer goroutine.
	spare    []Record
	buf      []byte
	entries  []entry // what buf holds, line by line
	reported uint64  // dropped records already reported in the log
	torn     bool    // a failed write left a partial line
}

// entry is one line in the writer's buffer: where it ends and, for the line
// about dropped records, the count it reports.
type entry struct {
	end     int
	dropped uint64 // 0 for a record
}

// flushAt is the size at which the writer writes its buffer even if more
// records are queued.
const flushAt = 64 << 10

// Open opens the audit log at path, creating the file (mode 0600) if need
// be and appending to it, and starts its writer. Path "-" means standard
// error, which Close leaves open. The file's directory must exist.
func Open(path string, o *Options) (*Log, error) {
	if path == "" {
		return nil, errors.New("audit: no path (use \"-\" for standard error)")
	}
	if path == "-" {
		l := newLog(os.Stderr, nil, "standard error", o)
		return l, nil
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			dir := filepath.Dir(path)
			if _, serr := os.Stat(dir); errors.Is(serr, fs.ErrNotExist) {
				return nil, fmt.Errorf("audit: cannot open %s: directory %s does not exist", path, dir)
			}
		}
		return nil, fmt.Errorf("audit: %w", err)
	}
	return newLog(f, f, path, o), nil
}

// New returns a Log that writes to w and starts its writer. The Log never
// closes w. Only the Log's goroutine calls w.Write, one call at a time.
func New(w io.Writer, o *Options) *Log {
	return newLog(w, nil, "audit log", o)
}

func newLog(w io.Writer, c io.Closer, name string, o *Options) *Log {
	l := &Log{
		name:   name,
		w:      w,
		closer: c,
		now:    time.Now,
		max:    DefaultBuffer,
		wake:   make(chan struct{}, 1),
		stop:   make(chan struct{}),
		done:   make(chan struct{}),
	}
	if o != nil {
		if o.Buffer > 0 {
			l.max = o.Buffer
		}
		if o.Now != nil {
			l.now = o.Now
		}
	}
	go l.run()
	return l
}

// Write queues a copy of r to be written; the caller may reuse r, but not
// change the elements of r.Checks, which are not copied. It never
// waits for I/O: it only takes a lock that is never held across I/O or
// encoding. If Options.Buffer records are already waiting (the writer is
// slow or stuck), or the Log is closed, the record is dropped and counted
// (see Dropped), and, unless the Log is closed, a line reporting the loss
// ("event":"audit_dropped") is written as soon as the writer catches up.
//
// A zero r.Time is set to the current time; a caller that has measured
// the Duration already has the time and saves a clock read by setting it.
// A nil r is ignored.
func (l *Log) Write(r *Record) {
	if l == nil || r == nil {
		return
	}
	var now time.Time
	if r.Time.IsZero() {
		now = l.now() // outside the lock
	}
	l.mu.Lock()
	if l.closed || len(l.queue) >= l.max {
		l.mu.Unlock()
		l.dropped.Add(1)
		return
	}
	l.queue = append(l.queue, *r)
	if !now.IsZero() {
		l.queue[len(l.queue)-1].Time = now
	}
	first := len(l.queue) == 1
	l.mu.Unlock()
	if first {
		select {
		case l.wake <- struct{}{}:
		default:
		}
	}
}

// Dropped returns the number of records given to Write that are not in the
// log: dropped because the queue was full or the Log closed, lost to a
// write error, or left when Close gave up.
func (l *Log) Dropped() uint64 {
	if l == nil {
		return 0
	}
	return l.dropped.Load()
}

// Err returns the first error writing or closing the log, or nil. After an
// error the Log goes on trying to write; the error is kept so that the
// caller can report it once.
func (l *Log) Err() error {
	if l == nil {
		return nil
	}
	if p := l.err.Load(); p != nil {
		return *p
	}
	return nil
}

// Close stops accepting records, waits until the queued ones and, if
// records were dropped, the line saying so are written, and closes the
// file (not standard error, nor the writer given to New). If ctx is done
// first, Close tells the writer to stop after its current write, drops the
// rest and returns ctx's error; a write that never returns leaves the
// writer goroutine behind. Otherwise it returns Err. Close may be called
// more than once; each call waits as the first did.
func (l *Log) Close(ctx context.Context) error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	if !l.closed {
		l.closed = true
		close(l.stop)
	}
	l.mu.Unlock()
	select {
	case <-l.done:
		return l.Err()
	case <-ctx.Done():
		select {
		case <-l.done: // finished too
			return l.Err()
		default:
		}
		l.aborted.Store(true)
		return fmt.Errorf("audit: closing %s: records not written: %w", l.name, context.Cause(ctx))
	}
}

// run is the writer goroutine.
func (l *Log) run() {
	defer close(l.done)
	for {
		select {
		case <-l.wake:
		case <-l.stop:
		}
		l.mu.Lock()
		batch := l.queue
		l.queue = l.spare[:0]
		closed := l.closed
		l.mu.Unlock()

		for i := range batch {
			if l.aborted.Load() {
				l.dropped.Add(uint64(len(batch) - i))
				break
			}
			l.buf = appendRecord(l.buf, &batch[i])
			l.buf = append(l.buf, '\n')
			l.entries = append(l.entries, entry{end: len(l.buf)})
			if len(l.buf) >= flushAt {
				l.flush()
			}
		}
		clear(batch)
		l.spare = batch[:0]
		if !l.aborted.Load() {
			l.reportDropped()
			l.flush()
		}
		if closed || l.aborted.Load() {
			// No Write enqueues once closed is set, so if closed was set
			// when batch was taken, it held the last records. After an
			// abort, count what was left.
			l.mu.Lock()
			left := len(l.queue)
			l.queue = nil
			l.mu.Unlock()
			for _, e := range l.entries {
				if e.dropped == 0 {
					left++
				}
			}
			l.dropped.Add(uint64(left))
			if l.closer != nil {
				if err := l.closer.Close(); err != nil {
					l.setErr(fmt.Errorf("audit: closing %s: %w", l.name, err))
				}
			}
			return
		}
	}
}

// reportDropped adds the line about dropped records, if any were dropped
// since the last one.
func (l *Log) reportDropped() {
	n := l.dropped.Load() - l.reported
	if n == 0 {
		return
	}
	l.reported += n
	l.buf = appendDropped(l.buf, l.now(), n)
	l.buf = append(l.buf, '\n')
	l.entries = append(l.entries, entry{end: len(l.buf), dropped: n})
}

// flush writes the buffer. On an error it counts the records it lost,
// forgets that it reported drops it could not write, and remembers whether
// it left a partial line.
func (l *Log) flush() {
	if len(l.buf) == 0 {
		return
	}
	if l.torn {
		// End the partial line, so that the next one can be read.
		if _, err := l.w.Write([]byte{'\n'}); err != nil {
			l.lose(0, err)
			return
		}
		l.torn = false
	}
	n, err := l.w.Write(l.buf)
	if err == nil && n < len(l.buf) {
		err = io.ErrShortWrite
	}
	if err != nil {
		l.lose(n, err)
		return
	}
	l.buf = l.buf[:0]
	l.entries = l.entries[:0]
	if cap(l.buf) > 4*flushAt {
		l.buf = nil // after one huge record
	}
}

// lose accounts for a write of the buffer that failed after n bytes, and
// empties the buffer.
func (l *Log) lose(n int, err error) {
	l.setErr(fmt.Errorf("audit: writing %s: %w", l.name, err))
	start := 0
	for _, e := range l.entries {
		switch {
		case e.end <= n: // written
		case e.dropped > 0:
			l.reported -= e.dropped // report them again
		default:
			l.dropped.Add(1)
		}
		if e.end <= n {
			start = e.end
		}
	}
	if n > start {
		l.torn = true
	}
	l.buf = l.buf[:0]
	l.entries = l.entries[:0]
}

func (l *Log) setErr(err error) {
	l.err.CompareAndSwap(nil, &err)
}
