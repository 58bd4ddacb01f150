package gateway

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/gateway/cluster"
	"github.com/mcphost/mcphost/internal/sealbox"
)

// A server of a protocol version before 2026-07-28 asks during a call by a
// request of its own (elicitation/create, sampling/createMessage,
// roots/list) and waits for the answer inside the call. A 2026-07-28 client
// cannot be sent a request: it is asked by an input-required result, and
// answers by calling again. So, for a 2026-07-28 client's call to such a
// server, the gateway holds the upstream call: it runs on in the gateway,
// the server's question goes to the client as an input-required result
// whose request state (sealed to the call, ask.go) names the held call, and
// the retry's answer goes to the server's waiting request. The call ends
// when the server answers it, when the client does not come back within
// heldWait, or when the gateway stops. A call that ends while its question
// is out (the server gave up waiting) keeps its outcome for the retry.
//
// Held calls live in the memory of the replica that runs them. Behind
// several replicas (scale-out) the held call's id names its replica, so a
// retry that reaches another is passed on to it (heldforward.go); a retry
// that reaches the held call's own replica touches no shared state.

// heldWait is how long a held call waits for the client's retry.
const heldWait = 5 * time.Minute

// heldKey is the key of a held call's question in its input requests.
const heldKey = "mcphost_upstream"

type heldCalls struct {
	mu      sync.Mutex
	stopped bool // close was called: no new held calls
	m       map[string]*heldCall
	ctx     context.Context // ends every held call
	stop    context.CancelFunc
	wg      sync.WaitGroup
	limit   time.Duration

	// Scale-out (heldforward.go): the gateway whose replica the held
	// calls' ids name (nil: ids name none, every retry is this process's),
	// the box that seals what is passed between replicas (the gateway's
	// keys, cluster.HeldForwardPurpose), the rounds served for retries other
	// replicas passed on (their cancellations, by reply key), and the pace
	// of those rounds' replies.
	g       *Gateway
	box     *sealbox.Box
	rounds  map[string]context.CancelFunc
	ackWait time.Duration // the replica waiting gives up after this long without the owner's ack ...
	pulse   time.Duration // ... the owner then says it is alive this often ...
	silence time.Duration // ... and the replica waiting gives up after this long without a word
}

func newHeldCalls() *heldCalls {
	h := &heldCalls{m: map[string]*heldCall{}, limit: heldWait, rounds: map[string]context.CancelFunc{},
		ackWait: heldAckWait, pulse: heldPulse, silence: heldSilence}
	h.ctx, h.stop = context.WithCancel(context.Background())
	return h
}

// bind makes the held calls g's: their ids name g's replica, for retries
// that reach another replica to be passed on to this one.
func (h *heldCalls) bind(g *Gateway) {
	h.mu.Lock()
	h.g = g
	h.mu.Unlock()
}

// gateway is the gateway bound (nil for none).
func (h *heldCalls) gateway() *Gateway {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.g
}

// close ends every held call and waits for them.
func (h *heldCalls) close() {
	h.mu.Lock()
	h.stopped = true
	h.mu.Unlock()
	h.stop()
	h.wg.Wait()
}

// heldCall is an upstream call held across a client's retries.
type heldCall struct {
	id     string          // [REPLICA "."] random hex
	ctx    context.Context // the held call's: ends with it
	caps   *mcp.ClientCapabilities
	cancel context.CancelFunc
	asks   chan *heldAsk    // the server's questions, for the client
	done   chan heldOutcome // the call's outcome (capacity 1)
	expiry *time.Timer      // ends the call when no retry comes in time

	mu      sync.Mutex
	ended   bool       // the call's outcome is in done
	waiting *heldAsk   // out with the client, awaiting its retry
	seq     uint64     // numbers the questions: a state answers only its own
	caller  string     // the principal the call is made for (callerID, set by its first round)
	at      heldClient // where the current round's messages go (zero between rounds)

	// A held call of another replica, as get returns it for a retry
	// that reached this one: answer keeps the retry's answer, round
	// passes both on to the owner (heldforward.go).
	remote    string // the owner's replica id ("": this replica's own call)
	fwdSeq    uint64
	fwdAnswer mcp.InputResponse
}

// heldClient is the client of a held call's current round: the session of
// the request this replica serves, or for a retry passed on by another
// replica, relay and relayLog, which send progress and log messages back
// to it.
type heldClient struct {
	ss       *mcp.ServerSession
	ctx      context.Context // the request's
	token    any             // its progress token
	relay    func(*mcp.ProgressNotificationParams)
	relayLog func(*mcp.LoggingMessageParams)
}

// requestClient is the client of a request this replica serves.
func requestClient(ctx context.Context, req *mcp.CallToolRequest) heldClient {
	return heldClient{ss: req.Session, ctx: ctx, token: req.Params.GetProgressToken()}
}

type heldAsk struct {
	req    mcp.InputRequest
	answer chan mcp.InputResponse // capacity 1
}

type heldOutcome struct {
	res *mcp.CallToolResult
	err error
}

// start runs call in a held call answering for req's client.
func (h *heldCalls) start(req *mcp.CallToolRequest, call func(ctx context.Context, r *heldRequester) (*mcp.CallToolResult, error)) *heldCall {
	var rid [16]byte
	rand.Read(rid[:])
	id := hex.EncodeToString(rid[:])
	if g := h.gateway(); g != nil {
		id = g.replica + "." + id
	}
	ctx, cancel := context.WithCancel(h.ctx)
	hc := &heldCall{id: id, ctx: ctx, caps: req.ClientCapabilities(), cancel: cancel,
		asks: make(chan *heldAsk), done: make(chan heldOutcome, 1)}
	hc.expiry = time.AfterFunc(h.limit, func() {
		cancel()
		h.forget(hc)
	})
	hc.expiry.Stop()
	h.mu.Lock()
	if h.stopped {
		h.mu.Unlock()
		cancel()
		hc.done <- heldOutcome{nil, errShuttingDown("mcphost is shutting down")}
		return hc
	}
	h.m[hc.id] = hc
	h.wg.Add(1)
	owner := h.g
	h.mu.Unlock()
	go func() {
		defer h.wg.Done()
		defer cancel()
		res, err := call(ctx, &heldRequester{hc: hc, g: owner})
		hc.done <- heldOutcome{res, err}
		hc.mu.Lock()
		hc.ended = true
		out := hc.waiting != nil
		hc.mu.Unlock()
		if !out {
			h.forget(hc) // a later retry finds it ended
		}
		// Else a question is out: its retry collects the outcome, or the
		// expiry forgets the call.
	}()
	return hc
}

// get returns the held call a question's key names, and the question's
// number. A key that names another replica gives a stand-in for the call
// there, which passes the retry on (heldforward.go).
func (h *heldCalls) get(key string) (*heldCall, uint64) {
	id, n, _ := strings.Cut(key, "/")
	seq, err := strconv.ParseUint(n, 10, 64)
	if err != nil {
		return nil, 0
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if owner, _, named := strings.Cut(id, "."); named && h.g != nil && owner != h.g.replica {
		if !cluster.ValidReplica(owner) {
			return nil, 0
		}
		return &heldCall{id: id, remote: owner}, seq
	}
	return h.m[id], seq
}

func (h *heldCalls) forget(hc *heldCall) {
	h.mu.Lock()
	delete(h.m, hc.id)
	h.mu.Unlock()
	hc.expiry.Stop()
}

// round serves one request of the client: until the call ends (its result),
// the server asks something (an input-required result that seal turns the
// question's key — the held call's id and the question's number — into the
// request state of), or the request ends (the call is cancelled).
func (h *heldCalls) round(ctx context.Context, req *mcp.CallToolRequest, hc *heldCall, seal func(key string) string) (res *mcp.CallToolResult, asked bool, err error) {
	if hc.remote != "" {
		return h.forwardRound(ctx, req, hc, seal)
	}
	hc.mu.Lock()
	if hc.seq == 0 && hc.caller == "" {
		hc.caller = callerID(ctx) // (the first round: the call's own request)
	}
	hc.mu.Unlock()
	return h.serveRound(ctx, hc, requestClient(ctx, req), seal)
}

// serveRound is round for client, a request this replica serves or one
// another passed on.
func (h *heldCalls) serveRound(ctx context.Context, hc *heldCall, client heldClient, seal func(key string) string) (res *mcp.CallToolResult, asked bool, err error) {
	hc.mu.Lock()
	hc.at = client
	hc.mu.Unlock()
	select {
	case out := <-hc.done:
		h.forget(hc)
		return out.res, false, out.err
	case a := <-hc.asks:
		hc.mu.Lock()
		if hc.ended {
			// The call ended as it asked: its outcome, not the question.
			hc.mu.Unlock()
			out := <-hc.done
			h.forget(hc)
			return out.res, false, out.err
		}
		hc.waiting = a
		hc.seq++
		key := hc.id + "/" + strconv.FormatUint(hc.seq, 10)
		hc.at = heldClient{}
		hc.mu.Unlock()
		hc.expiry.Reset(h.limit)
		return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{heldKey: a.req}, RequestState: seal(key)}, true, nil
	case <-ctx.Done():
		hc.cancel()
		h.forget(hc)
		return nil, false, ctx.Err()
	}
}

// progress passes the server's progress on to the current round's client,
// under that request's progress token.
func (hc *heldCall) progress(pn *mcp.ProgressNotificationParams) {
	switch c := hc.round(); {
	case c.relay != nil:
		c.relay(pn) // (to the replica the round's request reached)
	case c.ss != nil && c.token != nil:
		fwd := *pn
		fwd.ProgressToken = c.token
		c.ss.NotifyProgress(c.ctx, &fwd)
	}
}

// log passes a log message of the server (tagged with the server) on to
// the current round's client; between rounds no stream is open to it.
func (hc *heldCall) log(p *mcp.LoggingMessageParams) {
	switch c := hc.round(); {
	case c.relayLog != nil:
		c.relayLog(p) // (to the replica the round's request reached)
	case c.ss != nil:
		c.ss.Log(c.ctx, p)
	}
}

// answer passes the client's answer, from its retry, to question seq, the
// one out. The retry's request becomes the current round at once (what the
// server sends before round runs reaches it).
func (hc *heldCall) answer(ctx context.Context, req *mcp.CallToolRequest, seq uint64, resp mcp.InputResponse) error {
	if resp == nil {
		return errors.New("the retry carries no answer to the question")
	}
	if hc.remote != "" {
		// Another replica's call: the answer goes with the round.
		hc.fwdSeq, hc.fwdAnswer = seq, resp
		return nil
	}
	return hc.answerFrom(requestClient(ctx, req), seq, resp)
}

// answerFrom is answer for client, a request this replica serves or one
// another passed on.
func (hc *heldCall) answerFrom(client heldClient, seq uint64, resp mcp.InputResponse) error {
	if resp == nil {
		return errors.New("the retry carries no answer to the question")
	}
	hc.mu.Lock()
	a := hc.waiting
	if a == nil || seq != hc.seq {
		hc.mu.Unlock()
		return errors.New("the call is not waiting for an answer to this question")
	}
	hc.waiting = nil
	hc.at = client
	hc.mu.Unlock()
	hc.expiry.Stop()
	a.answer <- resp
	return nil
}

// round is the client of the round in progress (none between rounds).
func (hc *heldCall) round() heldClient {
	hc.mu.Lock()
	defer hc.mu.Unlock()
	return hc.at
}

// heldRequester answers a held call's server requests by asking the client
// through the next round.
type heldRequester struct {
	hc *heldCall
	g  *Gateway // whose call it is (nil: not known)
}

// Client: every round of a held call is one client's (a stateless client's
// requests each have a session of their own).
func (r *heldRequester) Client() any { return r.hc }

func (r *heldRequester) Capabilities() *mcp.ClientCapabilities { return r.hc.caps }

func (r *heldRequester) ask(ctx context.Context, req mcp.InputRequest) (mcp.InputResponse, error) {
	a := &heldAsk{req: req, answer: make(chan mcp.InputResponse, 1)}
	select {
	case r.hc.asks <- a:
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-r.hc.ctx.Done():
		return nil, r.hc.ctx.Err()
	}
	select {
	case resp := <-a.answer:
		return resp, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-r.hc.ctx.Done():
		return nil, r.hc.ctx.Err()
	}
}

func (r *heldRequester) Elicit(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	if c := r.hc.caps; c == nil || c.Elicitation == nil || (p.Mode == "url" && c.Elicitation.URL == nil) {
		return nil, unsupported("elicitation")
	}
	return answerAs[*mcp.ElicitResult](r.ask(ctx, p))
}

func (r *heldRequester) CreateMessage(ctx context.Context, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	if c := r.hc.caps; c == nil || c.Sampling == nil {
		return nil, unsupported("sampling")
	}
	resp, err := r.ask(ctx, p)
	if err != nil {
		return nil, err
	}
	return samplingResult(resp)
}

// samplingResult is a client's answer to a sampling request of a server
// before 2026-07-28 (which asked for one content block), as that server
// expects it. go-sdk decodes a sampling response of a 2026-07-28 retry as
// a CreateMessageWithToolsResult (its content an array, or one block made
// one); a result of one text, image or audio block is the plain result;
// more than one block, or a tool_use or tool_result block, cannot be told
// to such a server (-32602).
func samplingResult(resp mcp.InputResponse) (*mcp.CreateMessageResult, error) {
	switch r := resp.(type) {
	case *mcp.CreateMessageResult:
		return r, nil
	case *mcp.CreateMessageWithToolsResult:
		if r == nil || len(r.Content) != 1 {
			n := 0
			if r != nil {
				n = len(r.Content)
			}
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("the client's sampling result has %d content blocks; the server (of a protocol version before 2026-07-28, asking without tools) takes one", n)}
		}
		switch r.Content[0].(type) {
		case *mcp.TextContent, *mcp.ImageContent, *mcp.AudioContent:
		default:
			// (tool_use, tool_result: the server asked without tools.)
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("the client's sampling result is %T; the server (of a protocol version before 2026-07-28, asking without tools) takes text, image or audio", r.Content[0])}
		}
		return &mcp.CreateMessageResult{Meta: r.Meta, Content: r.Content[0], Model: r.Model, Role: r.Role, StopReason: r.StopReason}, nil
	}
	return answerAs[*mcp.CreateMessageResult](resp, nil)
}

func (r *heldRequester) ListRoots(ctx context.Context, p *mcp.ListRootsParams) (*mcp.ListRootsResult, error) {
	if c := r.hc.caps; c == nil || (c.RootsV2 == nil && !c.Roots.ListChanged) {
		return nil, unsupported("roots")
	}
	return answerAs[*mcp.ListRootsResult](r.ask(ctx, p))
}

func answerAs[T mcp.InputResponse](resp mcp.InputResponse, err error) (T, error) {
	var zero T
	if err != nil {
		return zero, err
	}
	t, ok := resp.(T)
	if !ok {
		return zero, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("the client answered with %T, not %T", resp, zero)}
	}
	return t, nil
}

func unsupported(what string) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "the client does not support " + what}
}
