package conn

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"mime"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/mcphost/mcphost/internal/jsonrpcmsg"
)

// Over streamable HTTP the go-sdk's connection cannot be wrapped (its
// session hooks are unexported), so notifications are routed (notes.go) in
// the HTTP client instead: every text/event-stream response body is read
// through an sseRouter. A POST's stream carries the messages of the one
// request it was sent for, whose call the request's context names; the
// standalone stream's messages belong to no call.

// sseRouting is the http.RoundTripper that routes the notifications of
// event streams.
type sseRouting struct {
	base http.RoundTripper
	c    *Conn
	// meta captures the go-sdk client's _meta for the session's raw lane
	// (httpLane), from the first of its requests that can carry it.
	meta *rawMeta
}

func (t *sseRouting) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodPost && !t.meta.captured() && req.GetBody != nil {
		t.capture(req)
	}
	resp, err := t.base.RoundTrip(req)
	if err != nil || resp.Body == nil {
		return resp, err
	}
	listing := listingRequest(req) // (execution.go)
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if mt != "text/event-stream" {
		if listing && mt == "application/json" {
			executionBody(resp, t.c.m.opts.MaxMessageBytes)
		}
		return resp, nil
	}
	var on *call
	if req.Method == http.MethodPost { // a request's own stream
		on, _ = req.Context().Value(callKey{}).(*call)
	}
	route := func(data []byte) []byte { return t.c.routeEvent(data, on) }
	if listing {
		route = func(data []byte) []byte {
			if out := executionEvent(data); out != nil {
				return out
			}
			return t.c.routeEvent(data, on)
		}
	}
	resp.Body = newSSERouter(resp.Body, t.c.m.opts.MaxMessageBytes, route)
	return resp, nil
}

// routeEvent routes the message data, an event of a stream read from the
// server (on: the call whose response stream it is, nil for the standalone
// stream): it returns the message as routeNote changed it, or nil to keep
// it as it is.
func (c *Conn) routeEvent(data []byte, on *call) []byte {
	if !mayRoute(data) {
		return nil
	}
	msg, err := jsonrpcmsg.Decode(data)
	if err != nil {
		return nil // the go-sdk reports it
	}
	return changedData(c.routeNote(msg, on))
}

// mayRoute reports whether data may be a message routeNote routes (or
// takes a server's route out of): its method is one of those, written as
// is or with escapes ("roots\/list", "\u0072oots/list"; the only escapes
// that can spell its characters). What it reports false for is a response
// or another method's message, passed on unread.
func mayRoute(data []byte) bool {
	for _, s := range [...]string{`notifications/`, `elicitation/create`, `sampling/createMessage`, `roots/list`, `\/`, `\u`} {
		if bytes.Contains(data, []byte(s)) {
			return true
		}
	}
	return false
}

// capture reads the body of a request of the go-sdk client into meta.
func (t *sseRouting) capture(req *http.Request) {
	body, err := req.GetBody()
	if err != nil {
		return
	}
	defer body.Close()
	b, err := io.ReadAll(io.LimitReader(body, 1<<20))
	if err != nil {
		return
	}
	if msg, err := jsonrpcmsg.Decode(b); err == nil {
		t.meta.written(msg)
	}
}

// sseRouter passes an event stream on, replacing the data of the events for
// which route returns new data (route returns nil to keep an event as it
// is). Every other byte is passed on as it was read; an event larger than
// max is passed on unread (the go-sdk refuses it).
type sseRouter struct {
	src   *bufio.Reader
	body  io.Closer
	route func(data []byte) []byte
	max   int

	event   []byte // the raw bytes of the event being read
	fields  []byte // its lines other than data
	data    []byte // its data lines' values, joined by newlines
	nData   int    // how many data lines
	pass    bool   // the event is too large: passed on until its end
	partial []byte // a line longer than the read buffer, so far
	out     []byte // read, to be returned
	err     error  // of the source, returned once out is empty

	// lastID is the last event id the stream set ("id:"), retry the
	// reconnection time it asked for ("retry:"; 0: none), for a reader
	// that resumes the stream; name is the type of the event being read
	// ("event:"; "" for the default, "message"), for route to read;
	// overflow is set once an event larger than max was passed on unread.
	lastID   string
	retry    time.Duration
	name     string
	overflow bool
	id       string // the id of the event being read, if hasID
	hasID    bool
}

// sseReadSize is the read buffer of an sseRouter: an event's line longer
// than it is collected piecewise (partial).
const sseReadSize = 64 << 10

func newSSERouter(body io.ReadCloser, max int, route func([]byte) []byte) *sseRouter {
	return newSSERouterOn(bufio.NewReaderSize(body, sseReadSize), body, max, route)
}

// newSSERouterOn is newSSERouter reading body through src, which reads
// body.
func newSSERouterOn(src *bufio.Reader, body io.ReadCloser, max int, route func([]byte) []byte) *sseRouter {
	if max <= 0 {
		max = DefaultMaxMessageBytes
	}
	return &sseRouter{src: src, body: body, route: route, max: max}
}

// sseRouters are the routers of the event streams the raw lane reads up to
// a call's response (httpLane.stream): one per call in flight, reused with
// their buffers, rather than a 64 KiB read buffer and the event buffers
// allocated for each call.
type sseRouters struct{ pool sync.Pool }

// sseKeep bounds the event buffers a router keeps for reuse: those grown
// by a larger event are dropped.
const sseKeep = 64 << 10

// get returns a router that reads no stream yet (see restart), for max and
// route as newSSERouter's.
func (p *sseRouters) get(max int, route func([]byte) []byte) *sseRouter {
	r, ok := p.pool.Get().(*sseRouter)
	if !ok {
		r = newSSERouterOn(bufio.NewReaderSize(nil, sseReadSize), nil, max, route)
	}
	r.reuse(max, route)
	return r
}

// put returns a router that get returned, which its caller no longer
// reads.
func (p *sseRouters) put(r *sseRouter) {
	r.recycle()
	p.pool.Put(r)
}

// recycle readies r, which no one reads any more, for reuse: it forgets
// the stream and drops buffers grown past sseKeep.
func (r *sseRouter) recycle() {
	r.restart(nil)
	r.route = nil
	if max(cap(r.event), cap(r.fields), cap(r.data), cap(r.partial), cap(r.out)) > sseKeep {
		r.event, r.fields, r.data, r.partial, r.out = nil, nil, nil, nil, nil
	}
}

// reuse gives a recycled r the limit and route of newSSERouter's.
func (r *sseRouter) reuse(max int, route func([]byte) []byte) {
	if max <= 0 {
		max = DefaultMaxMessageBytes
	}
	r.max, r.route = max, route
}

// restart makes r read body from its start, as a new router would: what
// it read of another stream is forgotten (its buffers are kept).
func (r *sseRouter) restart(body io.ReadCloser) {
	r.src.Reset(body)
	r.body = body
	r.reset()
	r.pass, r.out, r.err = false, r.out[:0], nil
	r.lastID, r.retry, r.overflow = "", 0, false
}

// skip reads what Read would return next, and drops it: for a reader that
// wants only what route sees. It returns the source's error once it met
// one.
func (r *sseRouter) skip() error {
	if len(r.out) == 0 && r.err == nil {
		r.step()
	}
	r.out = r.out[:0]
	return r.err
}

func (r *sseRouter) Read(p []byte) (int, error) {
	for len(r.out) == 0 && r.err == nil {
		r.step()
	}
	if len(r.out) > 0 {
		n := copy(p, r.out)
		r.out = r.out[n:]
		return n, nil
	}
	return 0, r.err
}

func (r *sseRouter) Close() error { return r.body.Close() }

// step reads one line (or a buffer's worth of one) and moves what is
// decided to out.
func (r *sseRouter) step() {
	line, err := r.src.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) && !r.pass {
		// A line longer than the buffer: collected, up to the event limit.
		r.partial = append(r.partial, line...)
		if len(r.partial)+len(r.event) > r.max {
			r.out = append(append(r.out, r.event...), r.partial...)
			r.reset()
			r.pass, r.overflow = true, true
		}
		return
	}
	if errors.Is(err, bufio.ErrBufferFull) {
		r.out = append(r.out, line...)
		return
	}
	if len(r.partial) > 0 {
		line = append(r.partial, line...)
		r.partial = r.partial[:0]
	}
	if err != nil {
		// The end of the stream (or a failure): what is held goes on as it
		// is, then the error.
		r.out = append(append(r.out, r.event...), line...)
		r.reset()
		r.err = err
		return
	}
	blank := len(bytes.TrimRight(line, "\r\n")) == 0
	if r.pass {
		r.out = append(r.out, line...)
		r.pass = !blank
		return
	}
	if blank {
		r.finish(line)
		return
	}
	r.event = append(r.event, line...)
	if len(r.event) > r.max {
		r.out = append(r.out, r.event...)
		r.reset()
		r.pass, r.overflow = true, true
		return
	}
	name, value, _ := bytes.Cut(bytes.TrimRight(line, "\r\n"), []byte{':'})
	switch string(name) {
	case "data":
		if r.nData > 0 {
			r.data = append(r.data, '\n')
		}
		r.data = append(r.data, bytes.TrimSpace(value)...)
		r.nData++
		return
	case "id":
		if v := bytes.TrimPrefix(value, []byte{' '}); bytes.IndexByte(v, 0) < 0 {
			r.id, r.hasID = string(v), true // (the last id once the event is whole)
		}
	case "event":
		r.name = string(bytes.TrimPrefix(value, []byte{' '}))
	case "retry":
		if ms, err := strconv.Atoi(string(bytes.TrimPrefix(value, []byte{' '}))); err == nil && ms >= 0 {
			r.retry = time.Duration(ms) * time.Millisecond
		}
	}
	r.fields = append(r.fields, line...)
}

// finish ends the event at its blank line end.
func (r *sseRouter) finish(end []byte) {
	if r.hasID {
		r.lastID = r.id
	}
	var data []byte
	if r.nData > 0 {
		data = r.route(r.data)
	}
	if data == nil {
		r.out = append(append(r.out, r.event...), end...)
	} else {
		r.out = append(r.out, r.fields...)
		r.out = append(r.out, "data: "...)
		r.out = append(r.out, data...)
		r.out = append(r.out, '\n')
		r.out = append(r.out, end...)
	}
	r.reset()
}

func (r *sseRouter) reset() {
	r.event, r.fields, r.data, r.nData, r.partial = r.event[:0], r.fields[:0], r.data[:0], 0, r.partial[:0]
	r.name, r.id, r.hasID = "", "", false
}

// changedData is the data of out, a message as changed (changed) from the
// one read: its encoding, or nil to keep the message as it is (when it was
// not changed, or cannot be encoded).
func changedData(out jsonrpc.Message, changed bool) []byte {
	if !changed {
		return nil
	}
	b, err := jsonrpc.EncodeMessage(out)
	if err != nil {
		return nil
	}
	return b
}
