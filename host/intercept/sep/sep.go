// Package sep runs the interceptors of SEP-2624 interceptor servers: MCP
// servers that answer interceptors/list and interceptor/invoke (the MCP
// Interceptors working group's draft, revision Revision), configured as
// interceptor "NAME" { server = "…" }.
//
// One interceptor block is one intercept.Entry. Its checker lists the
// server's interceptors once per session generation of the server, keeps
// those whose hooks cover the call's event and phase (and that the block's
// names select), and runs them as the SEP's trust-boundary model says: on
// the request (mcphost sending to the upstream) the mutators in turn
// (priorityHint, then name), then the validators in parallel on the mutated
// payload; on the response (mcphost receiving from the upstream) the
// validators in parallel, then the mutators. A validation that is not valid
// with severity "error" refuses the call; a server-declared audit-mode
// interceptor never blocks (its mutations are computed, not applied); a
// failing interceptor (an error, a crash, a timeout) blocks unless the
// server declared it failOpen or the block says fail_open.
package sep

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/intercept"
)

// Revision is the SEP-2624 revision implemented: the wire of the WG's
// conformance fixtures of 2026-09 (see wire.go). An interceptor block's
// protocol attribute may name it; no other is accepted.
const Revision = "sep-2624/2026-09"

// DefaultTimeout bounds one check when the block sets no timeout.
const DefaultTimeout = intercept.DefaultInterceptorTimeout

// Register lets client send interceptors/list and interceptor/invoke. The
// host calls it for every client its connections make.
func Register(c *mcp.Client) {
	// (They fail only for a standard method's name.)
	_ = mcp.AddSendingCustomMethod[*ListParams, *RawResult](c, MethodList)
	_ = mcp.AddSendingCustomMethod[*InvokeParams, *RawResult](c, MethodInvoke)
}

// Do runs fn with a live session of server, connecting first if needed (the
// host's connection manager's Do).
type Do func(ctx context.Context, server string, fn func(context.Context, *mcp.ClientSession) error) error

// ErrNotListed is matched by the error of a block whose names select an
// interceptor the server does not list.
var ErrNotListed = errors.New("not listed by the interceptor server")

// ErrUnsupported is matched by New's error for a configuration this
// package does not implement (it is intercept.ErrUnsupported).
var ErrUnsupported = intercept.ErrUnsupported

// Error is a failure to list or invoke a server's interceptors.
type Error struct {
	// Server is the interceptor server; Interceptor the interceptor ("" for
	// the list); Op MethodList or MethodInvoke.
	Server, Interceptor, Op string
	Err                     error
}

func (e *Error) Error() string {
	if e.Interceptor == "" {
		return fmt.Sprintf("%s of interceptor server %s: %v", e.Op, e.Server, e.Err)
	}
	return fmt.Sprintf("%s of %s on interceptor server %s: %v", e.Op, e.Interceptor, e.Server, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// New returns the entry of interceptor block ic (ic.Server set): do runs
// requests on the server, gen tells the generation of its current session
// (a new generation is listed again).
func New(ic *config.Interceptor, do Do, gen func(ctx context.Context, server string) uint64) (*intercept.Entry, error) {
	if ic == nil || ic.Server == "" {
		return nil, errors.New("sep.New: the interceptor block names no server")
	}
	if do == nil || gen == nil {
		return nil, errors.New("sep.New: do and gen are required")
	}
	if ic.Protocol != "" && ic.Protocol != Revision {
		return nil, fmt.Errorf("interceptor %q: protocol %q is %w: the only SEP-2624 revision implemented is %q", ic.Name, ic.Protocol, ErrUnsupported, Revision)
	}
	timeout := ic.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	k := &checker{server: ic.Server, names: slices.Clone(ic.Names), failOpen: ic.FailOpen, timeout: timeout,
		config: ic.Options, do: do, gen: gen, now: time.Now}
	return intercept.InterceptorEntry(ic, intercept.KindServer, k)
}

// checker is the intercept.Checker of one interceptor block.
type checker struct {
	server   string
	names    []string
	failOpen bool
	timeout  time.Duration
	config   json.RawMessage
	do       Do
	gen      func(ctx context.Context, server string) uint64
	now      func() time.Time

	mu     sync.Mutex
	listed *listing // of the server's last session listed
}

type listing struct {
	cs  *mcp.ClientSession
	gen uint64
	ds  []Descriptor
}

// Check runs the server's interceptors of c's event in phase p.
func (k *checker) Check(ctx context.Context, c *intercept.Call, p intercept.Phase) (intercept.Verdict, error) {
	phase := PhaseRequest
	if p == intercept.Response {
		phase = PhaseResponse
		if len(bytes.TrimSpace(c.Payload)) == 0 {
			return intercept.Verdict{}, nil // a failed call: no result to check
		}
	}
	ctx, cancel := context.WithTimeout(ctx, k.timeout)
	defer cancel()
	ds, err := k.list(ctx)
	if err != nil {
		return intercept.Verdict{}, err
	}
	var mutators, validators []*Descriptor
	for i := range ds {
		d := &ds[i]
		if len(k.names) > 0 && !slices.Contains(k.names, d.Name) || !d.Covers(c.Event, phase) {
			continue
		}
		switch d.Type {
		case TypeMutation:
			mutators = append(mutators, d)
		case TypeValidation:
			validators = append(validators, d)
		default:
			return intercept.Verdict{}, &Error{Server: k.server, Interceptor: d.Name, Op: MethodList,
				Err: fmt.Errorf("%w: unknown interceptor type %q", ErrMalformed, d.Type)}
		}
	}
	if len(mutators) == 0 && len(validators) == 0 {
		return intercept.Verdict{}, nil
	}
	slices.SortStableFunc(mutators, func(a, b *Descriptor) int {
		if pa, pb := a.PriorityFor(phase), b.PriorityFor(phase); pa != pb {
			return cmpInt(pa, pb)
		}
		return strings.Compare(a.Name, b.Name)
	})
	payload := k.wirePayload(c, phase)
	inv := invocation{event: c.Event, phase: phase, context: k.invokeContext(ctx, c)}
	changed := false
	// A failure the block's fail_open alone lets pass is returned when
	// nothing else decided, so the engine records it (error, timeout).
	var passed error
	tolerate := func(d *Descriptor, err error) bool {
		switch {
		case d.Mode == ModeAudit || d.FailOpen:
			return true
		case k.failOpen:
			if passed == nil {
				passed = err
			}
			return true
		}
		return false
	}
	mutate := func() error {
		for _, d := range mutators {
			r, err := k.invoke(ctx, d, inv, payload)
			if err != nil {
				if tolerate(d, err) {
					continue
				}
				return err
			}
			if *r.Modified && d.Mode != ModeAudit {
				payload, changed = r.Payload, true
			}
		}
		return nil
	}
	if phase == PhaseRequest {
		if err := mutate(); err != nil {
			return intercept.Verdict{}, err
		}
	}
	if v, err := k.validate(ctx, validators, inv, payload, tolerate); err != nil || v.Action == intercept.Deny {
		return v, err
	}
	if phase == PhaseResponse {
		if err := mutate(); err != nil {
			return intercept.Verdict{}, err
		}
	}
	if !changed {
		return intercept.Verdict{}, passed
	}
	out, err := k.fromWire(c, phase, payload)
	if err != nil {
		return intercept.Verdict{}, err
	}
	return intercept.Verdict{Action: intercept.Mutate, Payload: out}, nil
}

// validate runs validators in parallel on payload: a Deny with the first
// blocking one's message (in list order), or the error of the first that
// failed and is not tolerated.
func (k *checker) validate(ctx context.Context, validators []*Descriptor, inv invocation, payload json.RawMessage, tolerate func(*Descriptor, error) bool) (intercept.Verdict, error) {
	if len(validators) == 0 {
		return intercept.Verdict{}, nil
	}
	type outcome struct {
		r   Result
		err error
	}
	outs := make([]outcome, len(validators))
	var wg sync.WaitGroup
	for i, d := range validators {
		wg.Go(func() {
			r, err := k.invoke(ctx, d, inv, payload)
			outs[i] = outcome{r, err}
		})
	}
	wg.Wait()
	var firstErr error
	for i, d := range validators {
		o := outs[i]
		switch {
		case o.err != nil:
			if !tolerate(d, o.err) && firstErr == nil {
				firstErr = o.err
			}
		case d.Mode != ModeAudit && o.r.Blocks():
			reason := o.r.Reason()
			if reason == "" {
				reason = "not valid"
			}
			return intercept.Verdict{Action: intercept.Deny, Reason: capReason(d.Name + ": " + reason)}, nil
		}
	}
	return intercept.Verdict{}, firstErr
}

// list returns the server's interceptors, listed once per session of the
// server (the session the request runs on, and its generation).
func (k *checker) list(ctx context.Context) ([]Descriptor, error) {
	var (
		raw    []byte
		cached []Descriptor
		on     *mcp.ClientSession
		gen    uint64
	)
	err := k.do(ctx, k.server, func(ctx context.Context, cs *mcp.ClientSession) error {
		on, gen, raw, cached = cs, k.gen(ctx, k.server), nil, nil
		k.mu.Lock()
		l := k.listed
		k.mu.Unlock()
		if l != nil && l.cs == cs && l.gen == gen {
			cached = l.ds
			return nil
		}
		r, err := mcp.CallCustomMethod[*ListParams, *RawResult](ctx, cs, MethodList, &ListParams{})
		if err != nil {
			return err
		}
		raw = r.Raw
		return nil
	})
	if err != nil {
		return nil, &Error{Server: k.server, Op: MethodList, Err: err}
	}
	if cached != nil {
		return cached, nil
	}
	ds, err := DecodeList(raw)
	if err != nil {
		return nil, &Error{Server: k.server, Op: MethodList, Err: err}
	}
	for _, n := range k.names {
		if !slices.ContainsFunc(ds, func(d Descriptor) bool { return d.Name == n }) {
			return nil, &Error{Server: k.server, Interceptor: n, Op: MethodList, Err: ErrNotListed}
		}
	}
	k.mu.Lock()
	k.listed = &listing{cs: on, gen: gen, ds: ds}
	k.mu.Unlock()
	return ds, nil
}

// invocation is what every invoke of one check shares.
type invocation struct {
	event, phase string
	context      *InvokeContext
}

// invoke runs interceptor d on payload and checks that its result is one
// of d's type.
func (k *checker) invoke(ctx context.Context, d *Descriptor, inv invocation, payload json.RawMessage) (Result, error) {
	p := &InvokeParams{Name: d.Name, Event: inv.event, Phase: inv.phase, Payload: payload, Config: k.config, Context: inv.context}
	if dl, ok := ctx.Deadline(); ok {
		p.TimeoutMs = max(time.Until(dl).Milliseconds(), 1)
	}
	var raw []byte
	err := k.do(ctx, k.server, func(ctx context.Context, cs *mcp.ClientSession) error {
		r, err := mcp.CallCustomMethod[*InvokeParams, *RawResult](ctx, cs, MethodInvoke, p)
		if err != nil {
			return err
		}
		raw = r.Raw
		return nil
	})
	if err != nil {
		return Result{}, &Error{Server: k.server, Interceptor: d.Name, Op: MethodInvoke, Err: err}
	}
	r, err := DecodeResult(raw)
	if err == nil {
		err = r.check(d.Type)
	}
	if err != nil {
		return Result{}, &Error{Server: k.server, Interceptor: d.Name, Op: MethodInvoke, Err: err}
	}
	return r, nil
}

// check reports a result that is not one of typ.
func (r *Result) check(typ string) error {
	if r.Type != "" && r.Type != typ {
		return fmt.Errorf("%w: a %s result from a %s interceptor", ErrMalformed, r.Type, typ)
	}
	switch typ {
	case TypeValidation:
		if r.Valid == nil {
			return fmt.Errorf("%w: a validation result without valid", ErrMalformed)
		}
	case TypeMutation:
		if r.Modified == nil {
			return fmt.Errorf("%w: a mutation result without modified", ErrMalformed)
		}
		if *r.Modified && len(r.Payload) == 0 {
			return fmt.Errorf("%w: a modified mutation result without payload", ErrMalformed)
		}
	}
	return nil
}

// wirePayload is c's payload as the SEP sends it: a tools/call request's
// params ({"name", "arguments"}, name as the upstream knows the tool),
// else c.Payload (prompts/get and resources/read params, a result).
func (k *checker) wirePayload(c *intercept.Call, phase string) json.RawMessage {
	if phase == PhaseRequest && c.Event == intercept.EventToolsCall {
		args := bytes.TrimSpace(c.Args)
		if len(c.Payload) > 0 {
			args = bytes.TrimSpace(c.Payload)
		}
		if len(args) == 0 || string(args) == "null" {
			args = []byte("{}")
		}
		b, _ := json.Marshal(struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		}{c.Original, args})
		return b
	}
	if len(bytes.TrimSpace(c.Payload)) == 0 {
		return json.RawMessage("{}")
	}
	return c.Payload
}

// fromWire is the inverse of wirePayload for a mutated payload (an
// object): a tools/call request's arguments (a mutator may not rename the
// tool).
func (k *checker) fromWire(c *intercept.Call, phase string, payload json.RawMessage) (json.RawMessage, error) {
	if p := bytes.TrimSpace(payload); len(p) == 0 || p[0] != '{' {
		// (Every payload is an object: request params, a result.)
		return nil, &Error{Server: k.server, Op: MethodInvoke, Err: fmt.Errorf("%w: a mutated payload that is not an object", ErrMalformed)}
	}
	if phase != PhaseRequest || c.Event != intercept.EventToolsCall {
		return payload, nil
	}
	var p struct {
		Name      *string         `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if err := json.Unmarshal(payload, &p); err != nil {
		return nil, &Error{Server: k.server, Op: MethodInvoke, Err: fmt.Errorf("%w: mutated tools/call params: %v", ErrMalformed, err)}
	}
	if p.Name != nil && *p.Name != c.Original {
		return nil, &Error{Server: k.server, Op: MethodInvoke, Err: fmt.Errorf("%w: a mutation renamed tool %q to %q", ErrMalformed, c.Original, *p.Name)}
	}
	if a := bytes.TrimSpace(p.Arguments); len(a) == 0 || string(a) == "null" {
		return json.RawMessage("{}"), nil
	} else if a[0] != '{' {
		return nil, &Error{Server: k.server, Op: MethodInvoke, Err: fmt.Errorf("%w: mutated arguments are not an object", ErrMalformed)}
	}
	return p.Arguments, nil
}

// invokeContext is the SEP context of c: its principal (type "user" with
// the subject as id, issuer and groups as claims; "anonymous" for the
// host's own user), session reference, trace and span ids, and the time.
func (k *checker) invokeContext(ctx context.Context, c *intercept.Call) *InvokeContext {
	ic := &InvokeContext{Principal: &Principal{Type: "anonymous"}, SessionID: c.Session,
		Timestamp: k.now().UTC().Format(time.RFC3339Nano)}
	if w := c.Who; w != nil {
		claims := map[string]any{"iss": w.Issuer}
		if len(w.Groups) > 0 {
			claims["groups"] = w.Groups
		}
		ic.Principal = &Principal{Type: "user", ID: w.Subject, Claims: claims}
	}
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		ic.TraceID, ic.SpanID = sc.TraceID().String(), sc.SpanID().String()
	}
	return ic
}

// MaxReason caps a refusal's reason (as Claude Code caps hook output), in
// bytes, cut at a rune boundary.
const MaxReason = 10000

func capReason(s string) string {
	if len(s) <= MaxReason {
		return s
	}
	s = s[:MaxReason]
	for len(s) > 0 && !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s + "…"
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
