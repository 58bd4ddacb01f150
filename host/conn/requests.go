package conn

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/internal/mcpmeta"
)

// What a server asks of the client during a call — elicitation, sampling,
// roots — is answered by the Requester of the call that caused it: the
// downstream client of a gateway call, or the host's own callbacks.
//
// How a request is tied to its call depends on the server's protocol:
//   - 2026-07-28: the server returns an input-required result to the call
//     itself (SEP-2322), so the tie is exact; the caller fulfils it (Fulfil)
//     and retries. The request carries the Requester's capabilities in its
//     _meta, so the server is offered only what that client can answer.
//   - earlier versions: the server sends a request of its own on the
//     connection, which names no call. It goes to the Requester of the calls
//     in flight to that server when they all share one Requester; when calls
//     of several Requesters are in flight it is refused rather than shown to
//     a client that did not cause it. With none in flight, the Manager's
//     Options.OnElicit / OnCreateMessage answer.
//   - -32042 (URL elicitation required, any version): ElicitURLs shows each
//     URL through the Requester and waits for the server's
//     notifications/elicitation/complete before the caller retries.

// Requester answers a server's requests on behalf of the caller of a call.
// Implementations must be comparable (pointers or structs of comparable
// fields). Calls whose Requesters are equal, or whose Client values are
// equal, belong to one client.
type Requester interface {
	// Capabilities is what the caller's client can answer; nil: nothing.
	Capabilities() *mcp.ClientCapabilities
	Elicit(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error)
	CreateMessage(ctx context.Context, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error)
	ListRoots(ctx context.Context, p *mcp.ListRootsParams) (*mcp.ListRootsResult, error)
}

// clientOf groups Requesters by client: one that has a Client method
// belongs to the client it returns (e.g. a downstream session whose calls
// each carry their own request context); any other is its own client.
func clientOf(r Requester) any {
	if c, ok := r.(interface{ Client() any }); ok {
		return c.Client()
	}
	return r
}

// ErrAmbiguousRequest refuses a server's request that cannot be tied to one
// caller (see Requester).
var ErrAmbiguousRequest = errors.New("the server's request names no call, and calls of several clients are in flight to it (protocol versions before 2026-07-28 cannot say which call a request belongs to)")

// errUnsupported is the JSON-RPC error for a request the caller's client
// cannot answer.
func errUnsupported(what string) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "the client does not support " + what}
}

// Fulfil answers a call's input requests through r.
func Fulfil(ctx context.Context, r Requester, reqs mcp.InputRequestMap) (mcp.InputResponseMap, error) {
	if len(reqs) == 0 {
		return nil, errors.New("the server is busy (an input-required result with no requests); retry later")
	}
	out := make(mcp.InputResponseMap, len(reqs))
	var mu sync.Mutex
	var wg sync.WaitGroup
	errs := make([]error, 0, len(reqs))
	for key, ir := range reqs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := fulfilOne(ctx, r, ir)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, fmt.Errorf("answering the server's request %q: %w", key, err))
				return
			}
			out[key] = resp
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}

func fulfilOne(ctx context.Context, r Requester, ir mcp.InputRequest) (mcp.InputResponse, error) {
	caps := r.Capabilities()
	if caps == nil {
		caps = &mcp.ClientCapabilities{}
	}
	switch p := ir.(type) {
	case *mcp.ElicitParams:
		if caps.Elicitation == nil || (p.Mode == "url" && caps.Elicitation.URL == nil) {
			return nil, errUnsupported("elicitation")
		}
		return across(ctx, p, r.Elicit)
	case *mcp.CreateMessageParams:
		if caps.Sampling == nil {
			return nil, errUnsupported("sampling")
		}
		return across(ctx, p, r.CreateMessage)
	case *mcp.ListRootsParams:
		if caps.RootsV2 == nil && !caps.Roots.ListChanged {
			return nil, errUnsupported("roots")
		}
		return across(ctx, p, r.ListRoots)
	}
	return nil, errUnsupported(fmt.Sprintf("the request %T", ir))
}

// across asks the caller's client by ask, passing a server's request p and
// the client's answer across the gateway as the other hop may carry them:
// the protocol-reserved _meta of each hop stays on that hop, both ways
// (mcpmeta.Forwardable).
func across[P mcp.Params, R mcp.Result](ctx context.Context, p P, ask func(context.Context, P) (R, error)) (R, error) {
	if !isNil(p) {
		if m := p.GetMeta(); m != nil {
			p.SetMeta(mcpmeta.Forwardable(m))
		}
	}
	res, err := ask(ctx, p)
	if err == nil && !isNil(res) {
		if m := res.GetMeta(); m != nil {
			res.SetMeta(mcpmeta.Forwardable(m))
		}
	}
	return res, err
}

// isNil reports whether v is nil or a nil pointer.
func isNil(v any) bool {
	rv := reflect.ValueOf(v)
	return !rv.IsValid() || (rv.Kind() == reflect.Pointer && rv.IsNil())
}

// URLElicitations returns the URL elicitations of a -32042 (URL elicitation
// required) error.
func URLElicitations(err error) ([]*mcp.ElicitParams, bool) {
	var rpc *jsonrpc.Error
	if !errors.As(err, &rpc) || rpc.Code != mcp.CodeURLElicitationRequired {
		return nil, false
	}
	var data struct {
		Elicitations []*mcp.ElicitParams `json:"elicitations"`
	}
	if len(rpc.Data) == 0 || json.Unmarshal(rpc.Data, &data) != nil || len(data.Elicitations) == 0 {
		return nil, false
	}
	for _, e := range data.Elicitations {
		if e == nil || e.Mode != "url" || e.URL == "" || e.ElicitationID == "" {
			return nil, false
		}
	}
	return data.Elicitations, true
}

// ElicitURLs shows each URL elicitation of a -32042 error through r and
// waits until the server reports each one complete. A declined or cancelled
// elicitation ends it with an error.
func (m *Manager) ElicitURLs(ctx context.Context, server string, r Requester, els []*mcp.ElicitParams) error {
	c := m.For(ctx, server)
	if c == nil {
		return fmt.Errorf("%w %q", ErrUnknown, server)
	}
	// Waiters first: the completion may arrive before Elicit returns.
	waits := make([]chan struct{}, len(els))
	for i, e := range els {
		waits[i] = c.elicitations.wait(e.ElicitationID)
	}
	defer func() {
		for _, e := range els {
			c.elicitations.forget(e.ElicitationID)
		}
	}()
	for _, e := range els {
		res, err := fulfilOne(ctx, r, e)
		if err != nil {
			return fmt.Errorf("the server needs the user to open a URL: %w", err)
		}
		if er, _ := res.(*mcp.ElicitResult); er == nil || er.Action != "accept" {
			return fmt.Errorf("the server needs the user to open %s, and the user did not agree", e.URL)
		}
	}
	for _, w := range waits {
		select {
		case <-w:
		case <-ctx.Done():
			return fmt.Errorf("waiting for the server to report the URL elicitation complete: %w", context.Cause(ctx))
		}
	}
	return nil
}

// elicitationWaiters are the URL elicitations a connection waits for, by id.
type elicitationWaiters struct {
	mu sync.Mutex
	m  map[string]chan struct{}
}

func (w *elicitationWaiters) wait(id string) chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.m == nil {
		w.m = map[string]chan struct{}{}
	}
	ch := make(chan struct{})
	w.m[id] = ch
	return ch
}

func (w *elicitationWaiters) forget(id string) {
	w.mu.Lock()
	delete(w.m, id)
	w.mu.Unlock()
}

// complete handles notifications/elicitation/complete.
func (w *elicitationWaiters) complete(id string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if ch, ok := w.m[id]; ok {
		close(ch)
		delete(w.m, id)
	}
}

// metaCapabilities is a Requester's capabilities as the _meta
// "io.modelcontextprotocol/clientCapabilities" value of a 2026-07-28 request.
func metaCapabilities(r Requester) map[string]any { return capabilitiesMeta(r.Capabilities()) }

// CapabilitiesJSON is a client's capabilities as the JSON object a request
// of NewProtocol carries in its _meta (roots only when the client has them).
func CapabilitiesJSON(caps *mcp.ClientCapabilities) []byte {
	b, _ := json.Marshal(capabilitiesMeta(caps))
	return b
}

func capabilitiesMeta(caps *mcp.ClientCapabilities) map[string]any {
	if caps == nil {
		caps = &mcp.ClientCapabilities{}
	}
	b, err := json.Marshal(caps)
	if err != nil {
		return map[string]any{}
	}
	var m map[string]any
	json.Unmarshal(b, &m)
	delete(m, "roots") // the 2026-07-28 form: present only when supported
	if caps.RootsV2 != nil || caps.Roots.ListChanged {
		m["roots"] = map[string]any{"listChanged": caps.Roots.ListChanged || (caps.RootsV2 != nil && caps.RootsV2.ListChanged)}
	}
	return m
}
