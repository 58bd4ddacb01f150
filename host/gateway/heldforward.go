package gateway

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/gateway/cluster"
	"github.com/mcphost/mcphost/host/intercept"
	"github.com/mcphost/mcphost/host/registry"
	"github.com/mcphost/mcphost/host/state"
	"github.com/mcphost/mcphost/internal/sealbox"
)

// A held call's retry that reaches another replica (scale-out).
//
// A held call (held.go) runs on the replica its call reached — its owner —
// and its id names that replica: the id travels in each question's key,
// sealed into the request state (ask.go), so it cannot be changed. A retry
// whose key names another replica is first checked here as a retry of a
// call of this replica's own would be (the request state is sealed to the
// call and to the caller: another principal's retry is refused before
// anything is passed on), then passed on to the owner over the shared
// state, as a request and its replies:
//
//   - this replica publishes on cluster.ForwardChannel(owner) "held REPLY\n" and
//     the retry (heldRetry: the question's key, the client's answer, the
//     caller, whether the request asks for progress), and pops the replies
//     from the list REPLY (a random key);
//   - the owner answers the question and serves the round as it serves a
//     retry of its own, pushing to REPLY at once an ack, then every
//     heldPulse that it is alive, the call's progress, and last the round's
//     end: the next question (its key, which this replica seals into the
//     request state, as the owner would have) or the call's outcome.
//
// Both the retry and every reply are sealed (cluster.HeldForwardPurpose, a key
// derived from MCPHOST_SESSION_KEYS) and bound to the owner and the reply
// list, so that the shared state never holds a client's answer, a
// question, progress or a result in clear, and a message made or moved by
// another than a replica does not open: the owner drops a retry or a
// cancellation that does not open (it neither acknowledges nor serves
// it), and the replica waiting fails the round on a reply that does not.
//
// The replica waiting gives up after heldAckWait without the ack (the
// owner takes a retry at once: it is gone, or it never existed, as for the
// retry of a call of a process restarted since, whose id names the old
// process's replica), or after heldSilence without a reply once the owner
// has acked (the owner is gone, and the call with it: either way the
// client is told to call the tool again), or when its request ends; then
// it tells the owner
// ("heldcancel REPLY"), which then ends the call, as it does when a request
// of its own ends. (A request ends at its replica's drain deadline; a
// 2026-07-28 client going away does not end it, here as on the owner: the
// go-sdk's stateless handler does not propagate that.) On the owner, a
// round served for another replica is a request in flight (a drain waits
// for it, and its deadline cuts it short). Both messages are bounded: the retry by the limit of a request body, a
// reply by twice the limit of an upstream message (room for re-encoding).
//
// The upstream's progress and log messages during a round passed on go
// back on the reply list too, to the session of the retry's request.
// A retry that reaches the owner touches no shared state.

const (
	// heldPulse is how often the owner of a held call serving a round for
	// another replica tells it that it is alive.
	heldPulse = 2 * time.Second
	// heldAckWait is how long the replica that passed a retry on waits for
	// the owner's ack (pushed as soon as the retry arrives) before it takes
	// the owner for gone.
	heldAckWait = 2 * time.Second
	// heldSilence is how long the replica waiting for a round's replies,
	// once the owner acked, waits for the next one before it takes the
	// owner for gone.
	heldSilence = 10 * time.Second
	// heldReplyTTL bounds how long the replies of a round outlive the
	// replica that gave up waiting for them.
	heldReplyTTL = time.Minute
	// heldPushTimeout bounds one push of a reply.
	heldPushTimeout = 5 * time.Second
	// heldRetryOverhead bounds what a retry passed on holds besides its
	// answer (its key, the caller's id).
	heldRetryOverhead = 64 << 10
)

// heldAAD is what a sealed retry ("held-retry"), cancellation
// ("held-cancel") or reply ("held-reply") is bound to: the owner of the
// held call and the round's reply list.
func heldAAD(kind, owner, reply string) []byte {
	return []byte(kind + "\x00" + owner + "\x00" + reply)
}

// heldRetry is a retry passed on to the owner of its held call.
type heldRetry struct {
	Key      string          `json:"key"`              // the question's
	Caller   string          `json:"caller,omitempty"` // callerID of the retry's request
	Answer   json.RawMessage `json:"answer"`           // {heldKey: the client's answer} (an mcp.InputResponseMap)
	Progress bool            `json:"progress,omitempty"`
	// LogLevel is the retry's request's log level (its _meta): the
	// server's log messages at it and above go back ("" for none).
	LogLevel mcp.LoggingLevel `json:"logLevel,omitempty"`
	From     string           `json:"from"` // the replica that passes it on (for the logs)
}

// The kinds of a round's replies.
const (
	heldAck      = "ack"      // the owner took the retry
	heldAlive    = "alive"    // and is still serving its round
	heldProgress = "progress" // the call's progress
	heldLog      = "log"      // a log message of the server during the round
	heldAsked    = "asked"    // the round's end: the server asks again
	heldDone     = "done"     // the round's end: the call's outcome
)

// heldReply is one of a round's replies, from the owner.
type heldReply struct {
	Kind     string                          `json:"kind"`
	Progress *mcp.ProgressNotificationParams `json:"progress,omitempty"`
	Log      *mcp.LoggingMessageParams       `json:"log,omitempty"`
	Key      string                          `json:"key,omitempty"`      // asked: the question's key
	Question json.RawMessage                 `json:"question,omitempty"` // asked: {heldKey: the question} (an mcp.InputRequestMap)
	Result   *mcp.CallToolResult             `json:"result,omitempty"`   // done
	Error    *heldError                      `json:"error,omitempty"`    // done
}

// heldError is the outcome's error, as far as the gateway's answer to it
// depends on it (callResult, the audit line).
type heldError struct {
	Message string         `json:"message"`
	RPC     *jsonrpc.Error `json:"rpc,omitempty"`  // the JSON-RPC error it is or wraps
	Tool    string         `json:"tool,omitempty"` // the tool of the *host.ToolError it wraps (its result is the reply's)
	Is      []string       `json:"is,omitempty"`   // the sentinels it wraps (heldSentinels)
}

// heldSentinels are the errors an outcome's error is tested for.
var heldSentinels = map[string]error{
	"not_found":    registry.ErrNotFound,
	"denied":       host.ErrDenied,
	"timeout":      host.ErrTimeout,
	"tool_changed": host.ErrToolChanged,
	"refused":      intercept.ErrRefused,
	"canceled":     context.Canceled,
	"deadline":     context.DeadlineExceeded,
}

func encodeHeldError(err error) *heldError {
	if err == nil {
		return nil
	}
	he := &heldError{Message: err.Error()}
	var rpc *jsonrpc.Error
	if e, ok := refusalRPC(err); ok {
		he.RPC = e // (a check's refusal with a code: answered so)
	} else if errors.As(err, &rpc) {
		he.RPC = rpc
	}
	var te *host.ToolError
	if errors.As(err, &te) {
		he.Tool = te.Tool
	}
	for name, sentinel := range heldSentinels {
		if errors.Is(err, sentinel) {
			he.Is = append(he.Is, name)
		}
	}
	return he
}

// heldRemoteError is an outcome's error from the owner: its message, and
// what it wraps.
type heldRemoteError struct {
	msg   string
	wraps []error
}

func (e *heldRemoteError) Error() string   { return e.msg }
func (e *heldRemoteError) Unwrap() []error { return e.wraps }

func (he *heldError) decode(res *mcp.CallToolResult) error {
	if he == nil {
		return nil
	}
	e := &heldRemoteError{msg: he.Message}
	if he.RPC != nil {
		e.wraps = append(e.wraps, he.RPC)
	}
	if he.Tool != "" && res != nil {
		e.wraps = append(e.wraps, &host.ToolError{Tool: he.Tool, Result: res})
	}
	for _, name := range he.Is {
		if s, ok := heldSentinels[name]; ok {
			e.wraps = append(e.wraps, s)
		}
	}
	return e
}

// heldReplyLimit bounds a round's reply: twice the larger of a request
// body's limit and an upstream message's.
func (g *Gateway) heldReplyLimit() int {
	n := MaxMessageBytes
	if m := g.h.Config().Settings.MaxMessageBytes; m > n {
		n = m
	}
	return 2 * n
}

// heldLost is the answer to a retry whose owner did not answer.
func heldLost(owner string, silence time.Duration) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf(
		"invalid requestState: the call it belongs to was held by the gateway replica %s, which did not answer within %s: that replica is gone, and the call with it; call the tool again", owner, silence)}
}

// forwardRound is round for hc, a held call of another replica: the retry
// (its answer, kept by answer) goes to the owner, which serves the round;
// its replies come back here.
func (h *heldCalls) forwardRound(ctx context.Context, req *mcp.CallToolRequest, hc *heldCall, seal func(key string) string) (*mcp.CallToolResult, bool, error) {
	g := h.gateway()
	answer, err := json.Marshal(mcp.InputResponseMap{heldKey: hc.fwdAnswer})
	if err != nil {
		return nil, false, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid inputResponses: " + err.Error()}
	}
	if len(answer) > MaxMessageBytes {
		return nil, false, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("the answer exceeds %d bytes", MaxMessageBytes)}
	}
	token := req.Params.GetProgressToken()
	retry, _ := json.Marshal(&heldRetry{Key: hc.id + "/" + strconv.FormatUint(hc.fwdSeq, 10), Caller: callerID(ctx),
		Answer: answer, Progress: token != nil, LogLevel: metaLogLevel(req.Params.Meta), From: g.replica})
	var rk [16]byte
	rand.Read(rk[:])
	reply := cluster.HeldReplyKey(hex.EncodeToString(rk[:]))
	msg := h.box.Seal([]byte(cluster.ForwardHeld+" "+reply+"\n"), retry, heldAAD("held-retry", hc.remote, reply))
	if err := g.state.Publish(ctx, cluster.ForwardChannel(hc.remote), msg); err != nil {
		g.log.Warn("passing a held call's retry to the replica that holds the call", "replica", hc.remote, "error", err)
		// (The call still waits there: the same retry may succeed later.)
		return nil, false, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the call is held by another gateway replica, which cannot be reached now (the shared state is unavailable); retry later"}
	}
	giveUp := func() {
		// The owner ends the call, as for a request of its own that ends.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), heldPushTimeout)
		defer cancel()
		msg := h.box.Seal([]byte(cluster.ForwardHeldCancel+" "+reply+"\n"), nil, heldAAD("held-cancel", hc.remote, reply))
		if err := g.state.Publish(cctx, cluster.ForwardChannel(hc.remote), msg); err != nil {
			g.log.Warn("cancelling a held call on the replica that holds it", "replica", hc.remote, "error", err)
		}
	}
	limit := g.heldReplyLimit() + sealbox.Overhead
	aad := heldAAD("held-reply", hc.remote, reply)
	acked, wait := false, h.ackWait // (the owner acks at once; then it says it is alive every pulse)
	for {
		sealed, err := g.state.Pop(ctx, reply, wait)
		switch {
		case err == nil:
		case ctx.Err() != nil:
			giveUp()
			return nil, false, ctx.Err()
		case errors.Is(err, state.ErrNotFound):
			giveUp()
			what := "did not acknowledge its retry"
			if acked {
				what = "went silent while serving its retry"
			}
			g.log.Warn("a held call's replica "+what+": the call is lost", "replica", hc.remote, "waited", wait)
			return nil, false, heldLost(hc.remote, wait)
		default:
			giveUp()
			g.log.Warn("waiting for a held call's round on another replica", "replica", hc.remote, "error", err)
			return nil, false, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the call is held by another gateway replica, and the shared state failed while waiting for it: the call is cancelled; call the tool again"}
		}
		acked, wait = true, h.silence
		var r heldReply
		var b []byte
		ok := len(sealed) <= limit
		if ok {
			if b, err = h.box.Open(nil, sealed, aad); err != nil {
				ok = false
				g.log.Warn("a held call's reply from another replica does not open (every replica needs the same MCPHOST_SESSION_KEYS)", "replica", hc.remote)
			}
		}
		if !ok || json.Unmarshal(b, &r) != nil {
			giveUp()
			return nil, false, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the gateway replica that holds the call sent a malformed or oversized reply: the call is cancelled; call the tool again"}
		}
		switch r.Kind {
		case heldAck, heldAlive:
		case heldProgress:
			if token != nil && r.Progress != nil && req.Session != nil {
				p := *r.Progress
				p.ProgressToken = token
				req.Session.NotifyProgress(ctx, &p)
			}
		case heldLog:
			if r.Log != nil && req.Session != nil {
				req.Session.Log(ctx, r.Log) // (its level filters it, as for a round served here)
			}
		case heldAsked:
			var q mcp.InputRequestMap
			if json.Unmarshal(r.Question, &q) != nil || q[heldKey] == nil || !strings.HasPrefix(r.Key, hc.id+"/") {
				giveUp()
				return nil, false, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the gateway replica that holds the call sent a malformed question: the call is cancelled; call the tool again"}
			}
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{heldKey: q[heldKey]}, RequestState: seal(r.Key)}, true, nil
		case heldDone:
			if r.Result == nil && r.Error == nil {
				return nil, false, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the gateway replica that holds the call sent no outcome"}
			}
			return r.Result, false, r.Error.decode(r.Result)
		}
	}
}

// heldForwarded takes what another replica passed on about a held call of
// this one: "held REPLY" (a retry, body) or "heldcancel REPLY" (that
// replica's request for it ended), each sealed. It reports whether kind was
// one of those. A message that does not open is dropped. It runs on the
// shared state's subscription: the round is served by a goroutine of its
// own.
func (g *Gateway) heldForwarded(kind, reply string, body []byte) bool {
	h := g.held
	switch kind {
	case cluster.ForwardHeldCancel:
		if _, err := h.box.Open(nil, body, heldAAD("held-cancel", g.replica, reply)); err != nil {
			g.log.Warn("a held call's cancellation from another replica does not open (every replica needs the same MCPHOST_SESSION_KEYS): dropped")
			return true
		}
		h.mu.Lock()
		cancel := h.rounds[reply]
		h.mu.Unlock()
		if cancel != nil {
			cancel()
		}
		return true
	case cluster.ForwardHeld:
	default:
		return false
	}
	if !cluster.ValidHeldReplyKey(reply) {
		return true
	}
	if len(body) > MaxMessageBytes+heldRetryOverhead+sealbox.Overhead {
		g.log.Warn("a held call's retry from another replica is too large: dropped", "bytes", len(body))
		return true
	}
	body, err := h.box.Open(nil, body, heldAAD("held-retry", g.replica, reply))
	if err != nil {
		g.log.Warn("a held call's retry from another replica does not open (every replica needs the same MCPHOST_SESSION_KEYS): dropped")
		return true
	}
	ctx, cancel := context.WithCancel(context.Background())
	h.mu.Lock()
	if h.stopped {
		h.mu.Unlock()
		cancel()
		go g.pushHeld(reply, &heldReply{Kind: heldDone, Error: encodeHeldError(errShuttingDown("the gateway replica that holds the call is stopping; call the tool again"))})
		return true
	}
	h.rounds[reply] = cancel
	h.wg.Add(1)
	h.mu.Unlock()
	g.calls.add() // (a drain waits for it)
	go func() {
		defer h.wg.Done()
		defer g.calls.done()
		defer func() {
			h.mu.Lock()
			delete(h.rounds, reply)
			h.mu.Unlock()
			cancel()
		}()
		g.serveForwarded(ctx, reply, body)
	}()
	return true
}

// pushHeld pushes r, sealed, to the replies of round reply, and reports
// whether it could.
func (g *Gateway) pushHeld(reply string, r *heldReply) bool {
	b, err := json.Marshal(r)
	if err == nil && len(b) > g.heldReplyLimit() {
		err = fmt.Errorf("%d bytes, at most %d", len(b), g.heldReplyLimit())
		if r.Kind == heldDone {
			// The outcome is lost to the client all the same: say so.
			b, err = json.Marshal(&heldReply{Kind: heldDone, Error: &heldError{Message: fmt.Sprintf(
				"the call's result (%d bytes) is too large to pass between gateway replicas (at most %d)", len(b), g.heldReplyLimit())}})
		}
	}
	if err != nil {
		g.log.Warn("a held call's reply to another replica", "kind", r.Kind, "error", err)
		return false
	}
	b = g.held.box.Seal(nil, b, heldAAD("held-reply", g.replica, reply))
	ctx, cancel := context.WithTimeout(context.Background(), heldPushTimeout)
	defer cancel()
	if err := g.state.Push(ctx, reply, b, heldReplyTTL); err != nil {
		g.log.Warn("passing a held call's reply to the replica its retry reached", "kind", r.Kind, "error", err)
		return false
	}
	return true
}

// serveForwarded serves the round of a retry another replica passed on
// (body, a heldRetry, opened) as a retry of this replica's own, until ctx ends
// (that replica's request ended). The replies go to the list reply.
func (g *Gateway) serveForwarded(ctx context.Context, reply string, body []byte) {
	h := g.held
	if !g.pushHeld(reply, &heldReply{Kind: heldAck}) {
		return
	}
	fail := func(err error) { g.pushHeld(reply, &heldReply{Kind: heldDone, Error: encodeHeldError(err)}) }
	var m heldRetry
	if len(body) > MaxMessageBytes+heldRetryOverhead || json.Unmarshal(body, &m) != nil {
		fail(&jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "the retry passed on by another gateway replica is malformed or too large"})
		return
	}
	hc, seq := h.get(m.Key)
	if hc == nil || hc.remote != "" {
		fail(&jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid requestState: the call it belongs to has ended (it waits " + h.limit.String() + " for an answer)"})
		return
	}
	hc.mu.Lock()
	caller := hc.caller
	hc.mu.Unlock()
	if m.Caller != caller {
		// (The replica that passed it on checked the request state, sealed
		// to the caller: this one checks again.)
		g.log.Warn("a retry passed on by another replica is another principal's", "replica", m.From)
		fail(&jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid requestState: it does not belong to this call"})
		return
	}
	var answers mcp.InputResponseMap
	if err := json.Unmarshal(m.Answer, &answers); err != nil {
		fail(&jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid inputResponses: " + err.Error()})
		return
	}
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(g.abort, cancel) // the drain deadline
	defer stop()
	// The round's progress and log messages, in the order they came.
	notes := make(chan *heldReply, 32)
	note := func(r *heldReply) {
		select {
		case notes <- r:
		default: // (the replica waiting is behind: a message may be dropped)
		}
	}
	client := heldClient{ctx: rctx}
	if min := logSeverity(m.LogLevel); min > 0 {
		client.relayLog = func(p *mcp.LoggingMessageParams) {
			// Progress first: log messages take no more than half the
			// room left for the replica waiting.
			if logSeverity(p.Level) >= min && len(notes) < cap(notes)/2 {
				note(&heldReply{Kind: heldLog, Log: p})
			}
		}
	}
	if m.Progress {
		client.relay = func(p *mcp.ProgressNotificationParams) { note(&heldReply{Kind: heldProgress, Progress: p}) }
	}
	if err := hc.answerFrom(client, seq, answers[heldKey]); err != nil {
		fail(&jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid requestState: " + err.Error()})
		return
	}
	type outcome struct {
		res   *mcp.CallToolResult
		asked bool
		err   error
	}
	done := make(chan outcome, 1)
	go func() {
		res, asked, err := h.serveRound(rctx, hc, client, func(key string) string { return key })
		done <- outcome{res, asked, err}
	}()
	pulse := time.NewTicker(h.pulse)
	defer pulse.Stop()
	for {
		select {
		case <-pulse.C:
			g.pushHeld(reply, &heldReply{Kind: heldAlive})
		case r := <-notes:
			g.pushHeld(reply, r)
		case o := <-done:
			for len(notes) > 0 { // (before the round's end, as they came)
				g.pushHeld(reply, <-notes)
			}
			switch {
			case o.asked:
				q, err := json.Marshal(o.res.InputRequests)
				if err != nil || !g.pushHeld(reply, &heldReply{Kind: heldAsked, Key: o.res.RequestState, Question: q}) {
					// The question cannot reach the client: the call
					// is ended rather than left waiting for nobody.
					hc.cancel()
					h.forget(hc)
				}
			case g.abort.Err() != nil && ctx.Err() == nil:
				fail(errShuttingDown(fmt.Sprintf("the request was cancelled after the drain timeout (%s)", g.DrainTimeout())))
			default:
				g.pushHeld(reply, &heldReply{Kind: heldDone, Result: o.res, Error: encodeHeldError(o.err)})
			}
			return
		}
	}
}

// logSeverity ranks a log level (RFC 5424's, as MCP names them) from 1,
// or 0 for none of them.
func logSeverity(l mcp.LoggingLevel) int {
	return 1 + slices.Index([]mcp.LoggingLevel{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}, l)
}

// metaLogLevel returns the log level a request's _meta names, or "".
func metaLogLevel(m mcp.Meta) mcp.LoggingLevel {
	level, _ := m[mcp.MetaKeyLogLevel].(string)
	if logSeverity(mcp.LoggingLevel(level)) == 0 {
		return ""
	}
	return mcp.LoggingLevel(level)
}
