package intercept

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/permissions"
)

// The Claude Code hook events the engine runs.
const (
	HookPreToolUse         = "PreToolUse"
	HookPostToolUse        = "PostToolUse"
	HookPostToolUseFailure = "PostToolUseFailure"
	HookElicitation        = "Elicitation"
	HookElicitationResult  = "ElicitationResult"
)

// The decisions of a Record besides the actions' words.
const (
	DecisionError       = "error"
	DecisionTimeout     = "timeout"
	DecisionWouldDeny   = "would_deny"
	DecisionWouldMutate = "would_mutate"
)

// Plan is the checks that match one call, in declared order. A nil *Plan
// checks nothing. A Plan is immutable and shared by concurrent calls.
//
// Checkers get the *Call read-only: the hooks of one phase run in
// parallel on the same Call.
type Plan struct {
	event   string
	entries []*Entry
	// What the entries need, computed once.
	blocking, request, response bool
}

// newPlan returns the plan of the entries es for event.
func newPlan(event string, es []*Entry) *Plan {
	p := &Plan{event: event, entries: es}
	for _, e := range es {
		p.blocking = p.blocking || e.Blocking
		p.request = p.request || e.Phases&Request != 0
		p.response = p.response || e.Phases&Response != 0
	}
	return p
}

// forWho returns the part of p whose principals conditions include who
// (nil when none does); p itself when every entry stays.
func (p *Plan) forWho(who *permissions.Who) *Plan {
	var keep []*Entry
	for i, e := range p.entries {
		if e.Match.Principals == nil || e.Match.Principals.Matches(who) {
			if keep != nil {
				keep = append(keep, e)
			}
			continue
		}
		if keep == nil {
			keep = make([]*Entry, i, len(p.entries))
			copy(keep, p.entries[:i])
		}
	}
	switch {
	case keep == nil:
		return p
	case len(keep) == 0:
		return nil
	}
	return newPlan(p.event, keep)
}

// Entries returns the plan's entries in declared order.
func (p *Plan) Entries() []*Entry {
	if p == nil {
		return nil
	}
	return append([]*Entry(nil), p.entries...)
}

// Blocking reports whether a check of the plan runs out of process.
func (p *Plan) Blocking() bool { return p != nil && p.blocking }

// HasRequest reports whether the plan checks the request.
func (p *Plan) HasRequest() bool { return p != nil && p.request }

// HasResponse reports whether the plan checks the response. A caller
// whose Pre left context (PreOutcome.Context) calls Response too, to
// append it.
func (p *Plan) HasResponse() bool { return p != nil && p.response }

// PreOutcome is the merged outcome of a call's PreToolUse hooks.
type PreOutcome struct {
	// Hook is the merged decision (deny > ask > allow; a hook's "defer" is
	// no decision, Pass): Pass when no hook decided; HookBy the first
	// declared entry that decided it.
	Hook   Action
	HookBy *Entry
	Reason string
	// Args is the winning decision's updatedInput (the last declared of
	// its hooks that gave one), or nil. With Hook Pass, it is a Mutate's
	// payload.
	Args json.RawMessage
	// Refused is set exactly when Hook is Deny: a hook denied (exited 2),
	// or failed closed (an error or a timeout without fail_open).
	Refused *RefusedError
	// Context is the hooks' additionalContext, in declared order, at most
	// MaxContext characters in all.
	Context []string
	Records []Record
}

// Pre runs the plan's PreToolUse hooks, in parallel, and merges their
// decisions. Identical handlers (Entry.DedupKey) run once.
func (p *Plan) Pre(ctx context.Context, c *Call) PreOutcome {
	hooks := p.hooks(func(e *Entry) bool { return e.Phases&Request != 0 && e.Hook == HookPreToolUse })
	if len(hooks) == 0 {
		return PreOutcome{}
	}
	event := c.Event + "/request"
	res := runParallel(ctx, hooks, c, Request)
	var out PreOutcome
	var deny, ask, allow *result
	var mutate *result
	var ctxs []string
	for _, r := range res {
		e := r.entry
		rec := r.record(event)
		switch {
		case r.failed != "":
			if !e.FailOpen && e.Mode == Enforce && deny == nil {
				r.v = Verdict{Action: Deny, Reason: failReason(r.failed)}
				deny = r
			}
		case e.Mode == Audit:
			rec.Decision = wouldDecision(r.v)
		default:
			switch r.v.Action {
			case Deny:
				if deny == nil {
					deny = r
				}
			case Ask:
				if ask == nil {
					ask = r
				}
			case Allow:
				if allow == nil {
					allow = r
				}
			case Mutate:
				mutate = r
			}
			if r.v.Context != "" {
				ctxs = append(ctxs, r.v.Context)
			}
		}
		out.Records = append(out.Records, rec)
	}
	out.Context = capContexts(ctxs)
	win := deny
	switch {
	case deny != nil:
		out.Hook = Deny
	case ask != nil:
		out.Hook, win = Ask, ask
	case allow != nil:
		out.Hook, win = Allow, allow
	default:
		if mutate != nil {
			out.Args = mutate.v.Payload
		}
		return out
	}
	out.HookBy, out.Reason = win.entry, capString(win.v.Reason, MaxContext)
	if out.Hook == Deny {
		out.Refused = &RefusedError{By: win.entry.Name, Kind: win.entry.Kind, Reason: out.Reason}
		return out
	}
	for _, r := range res {
		if r.failed == "" && r.entry.Mode == Enforce && r.v.Action == out.Hook && len(r.v.Payload) > 0 {
			out.Args = r.v.Payload
		}
	}
	return out
}

// Request runs the plan's request interceptors in declared order and
// returns the payload they leave (c.Payload if none changed it): a
// Mutate's payload is the next one's input. A refusal is a *RefusedError
// (with the Verdict's Code); a check that fails (an error, a timeout)
// refuses unless its entry fails open. Audit-mode entries are recorded
// (would_deny, would_mutate) and change nothing.
func (p *Plan) Request(ctx context.Context, c *Call) (json.RawMessage, []Record, error) {
	payload := c.Payload
	if p == nil || !p.request {
		return payload, nil, nil
	}
	event := c.Event + "/request"
	var recs []Record
	for _, e := range p.entries {
		if e.Kind == KindHook || e.Phases&Request == 0 {
			continue
		}
		cc := *c
		cc.Payload, cc.Args = payload, payload
		r := runOne(ctx, e, &cc, Request)
		rec := r.record(event)
		switch {
		case r.failed != "":
			recs = append(recs, rec)
			if e.FailOpen || e.Mode == Audit {
				continue
			}
			return nil, recs, &RefusedError{By: e.Name, Kind: e.Kind, Reason: failReason(r.failed)}
		case e.Mode == Audit:
			rec.Decision = wouldDecision(r.v)
			recs = append(recs, rec)
			continue
		}
		switch r.v.Action {
		case Deny:
			recs = append(recs, rec)
			return nil, recs, &RefusedError{By: e.Name, Kind: e.Kind, Reason: capString(r.v.Reason, MaxContext), Code: r.v.Code}
		case Mutate:
			if len(r.v.Payload) > 0 {
				payload = r.v.Payload
			} else {
				rec.Decision = Pass.String()
			}
		default:
			rec.Decision = Pass.String()
		}
		recs = append(recs, rec)
	}
	return payload, recs, nil
}

// Response runs the plan's response interceptors in declared order, then
// the PostToolUse (or, for a failed call or an error result,
// PostToolUseFailure) hooks in parallel, and returns the result they
// leave; changed says it differs from c.Payload. It appends c.PreContext
// and the Post hooks' additionalContext as text content items.
//
// A Deny on a tools/call (an interceptor's, a PostToolUse hook's
// decision "block") turns the result into an error result with the
// reason; on another event it is a *RefusedError. For a call that failed
// without a result (c.Err set, c.Payload nil) only the PostToolUseFailure
// hooks run, and the result stays nil.
func (p *Plan) Response(ctx context.Context, c *Call) (result json.RawMessage, changed bool, recs []Record, err error) {
	result = c.Payload
	isErr := c.IsError || c.Err != nil
	event := c.Event + "/response"
	if p != nil && p.response && result != nil {
		for _, e := range p.entries {
			if e.Kind == KindHook || e.Phases&Response == 0 {
				continue
			}
			cc := *c
			cc.Payload, cc.IsError = result, isErr
			r := runOne(ctx, e, &cc, Response)
			rec := r.record(event)
			v := r.v
			switch {
			case r.failed != "":
				recs = append(recs, rec)
				if e.FailOpen || e.Mode == Audit {
					continue
				}
				v = Verdict{Action: Deny, Reason: failReason(r.failed)}
			case e.Mode == Audit:
				rec.Decision = wouldDecision(v)
				recs = append(recs, rec)
				continue
			default:
				if v.Action != Deny && (v.Action != Mutate || len(v.Payload) == 0) {
					rec.Decision = Pass.String()
				}
				recs = append(recs, rec)
			}
			if v.Action == Deny {
				if c.Event != EventToolsCall {
					return nil, false, recs, &RefusedError{By: e.Name, Kind: e.Kind, Reason: capString(v.Reason, MaxContext), Code: v.Code}
				}
				result, changed, isErr = errorResult(denyText(e, v.Reason)), true, true
				break
			}
			if v.Action == Mutate && len(v.Payload) > 0 {
				result, changed = v.Payload, true
				if c.Event == EventToolsCall {
					isErr = resultIsError(result)
				}
			}
		}
	}
	var ctxs []string
	ctxs = append(ctxs, c.PreContext...)
	if c.Event == EventToolsCall {
		var post postOutcome
		post, recs = p.post(ctx, c, result, isErr, event, recs)
		switch {
		case post.block != nil:
			result, changed = errorResult(denyText(post.block.entry, post.block.v.Reason)), true
		case post.output != nil:
			result, changed = post.output, true
		}
		ctxs = append(ctxs, post.context...)
	}
	if ctxs = capContexts(ctxs); len(ctxs) > 0 && result != nil && c.Event == EventToolsCall {
		if r, ok := appendText(result, ctxs); ok {
			result, changed = r, true
		}
	}
	return result, changed, recs, nil
}

// postOutcome is the merged outcome of the Post hooks of one call.
type postOutcome struct {
	block   *result         // the first declared PostToolUse deny
	output  json.RawMessage // the last declared updatedMCPToolOutput, as a result
	context []string
}

// post runs the PostToolUse hooks of a succeeded call, or the
// PostToolUseFailure hooks of a failed one, on result.
func (p *Plan) post(ctx context.Context, c *Call, result json.RawMessage, isErr bool, event string, recs []Record) (postOutcome, []Record) {
	var out postOutcome
	want := HookPostToolUse
	if isErr {
		want = HookPostToolUseFailure
	}
	hooks := p.hooks(func(e *Entry) bool { return e.Phases&Response != 0 && e.Hook == want })
	if len(hooks) == 0 {
		return out, recs
	}
	cc := *c
	cc.Payload, cc.IsError = result, isErr
	for _, r := range runParallel(ctx, hooks, &cc, Response) {
		e := r.entry
		rec := r.record(event)
		v := r.v
		switch {
		case r.failed != "":
			recs = append(recs, rec)
			if e.FailOpen || e.Mode == Audit || isErr {
				continue
			}
			v = Verdict{Action: Deny, Reason: failReason(r.failed)}
			r.v = v
		case e.Mode == Audit:
			rec.Decision = wouldDecision(v)
			recs = append(recs, rec)
			continue
		default:
			recs = append(recs, rec)
		}
		if v.Context != "" {
			out.context = append(out.context, v.Context)
		}
		switch {
		case isErr:
			// The call already failed: a PostToolUseFailure hook's block
			// shows its reason (Claude Code: "shows stderr to Claude").
			if v.Action == Deny && v.Reason != "" {
				out.context = append(out.context, v.Reason)
			}
		case v.Action == Deny:
			if out.block == nil {
				out.block = r
			}
		case v.Action == Mutate && len(v.Payload) > 0:
			if res, ok := toolOutput(v.Payload); ok {
				out.output = res
			}
		}
	}
	return out, recs
}

// ElicitBefore runs the Elicitation hooks: a non-nil result answers the
// question without asking anyone. A hook's Deny, or a failure without
// fail_open, declines; otherwise the last declared Mutate (its Payload an
// mcp.ElicitResult) answers.
func (p *Plan) ElicitBefore(ctx context.Context, c *Call) (*mcp.ElicitResult, []Record, error) {
	hooks := p.hooks(func(e *Entry) bool { return e.Phases&Request != 0 && e.Hook == HookElicitation })
	if len(hooks) == 0 {
		return nil, nil, nil
	}
	res, recs := elicitMerge(runParallel(ctx, hooks, c, Request), EventElicit+"/request")
	return res, recs, nil
}

// ElicitAfter runs the ElicitationResult hooks on the answer res and
// returns the answer to send: a hook's Deny, or a failure without
// fail_open, declines; the last declared Mutate overrides it.
func (p *Plan) ElicitAfter(ctx context.Context, c *Call, res *mcp.ElicitResult) (*mcp.ElicitResult, []Record, error) {
	hooks := p.hooks(func(e *Entry) bool { return e.Phases&Response != 0 && e.Hook == HookElicitationResult })
	if len(hooks) == 0 {
		return res, nil, nil
	}
	cc := *c
	if cc.Payload == nil && res != nil {
		b, err := json.Marshal(res)
		if err != nil {
			return nil, nil, err
		}
		cc.Payload = b
	}
	out, recs := elicitMerge(runParallel(ctx, hooks, &cc, Response), EventElicit+"/response")
	if out == nil {
		return res, recs, nil
	}
	return out, recs, nil
}

// elicitMerge merges the Elicitation (or ElicitationResult) hooks'
// verdicts: nil when none decided.
func elicitMerge(res []*result, event string) (*mcp.ElicitResult, []Record) {
	var recs []Record
	var out *mcp.ElicitResult
	declined := false
	for _, r := range res {
		e := r.entry
		rec := r.record(event)
		v := r.v
		switch {
		case r.failed != "":
			recs = append(recs, rec)
			if !e.FailOpen && e.Mode == Enforce {
				declined = true
			}
			continue
		case e.Mode == Audit:
			rec.Decision = wouldDecision(v)
			recs = append(recs, rec)
			continue
		}
		switch v.Action {
		case Deny:
			declined = true
		case Mutate:
			var er mcp.ElicitResult
			if err := json.Unmarshal(v.Payload, &er); err != nil || !validElicitAction(er.Action) {
				// An answer that is not one fails closed.
				rec.Decision = DecisionError
				declined = true
			} else {
				out = &er
			}
		default:
			rec.Decision = Pass.String()
		}
		recs = append(recs, rec)
	}
	if declined {
		return &mcp.ElicitResult{Action: "decline"}, recs
	}
	return out, recs
}

func validElicitAction(a string) bool {
	return a == "accept" || a == "decline" || a == "cancel"
}

// hooks returns the plan's hook entries that want selects, in declared
// order, each DedupKey once (the first declared).
func (p *Plan) hooks(want func(*Entry) bool) []*Entry {
	if p == nil {
		return nil
	}
	var out []*Entry
next:
	for _, e := range p.entries {
		if e.Kind != KindHook || !want(e) {
			continue
		}
		if e.DedupKey != "" {
			for _, o := range out {
				if o.DedupKey == e.DedupKey {
					continue next
				}
			}
		}
		out = append(out, e)
	}
	return out
}

// result is one entry's run.
type result struct {
	entry *Entry
	v     Verdict
	// failed is "" when the check answered, else DecisionError or
	// DecisionTimeout.
	failed     string
	start, end time.Time
}

// record returns r's Record for event (event/phase), its Decision the
// verdict's action or the failure.
func (r *result) record(event string) Record {
	d := r.failed
	if d == "" {
		d = r.v.Action.String()
	}
	return Record{Name: r.entry.Name, Kind: r.entry.Kind, Event: event, Decision: d, Mode: r.entry.Mode, Start: r.start, End: r.end}
}

// runOne runs e's check of c's phase p under e's timeout (an
// out-of-process one's: see below). An audit-mode
// check gets its own copy of the payload. A check that panics has failed
// (and fails closed unless its entry fails open).
func runOne(ctx context.Context, e *Entry, c *Call, p Phase) (r *result) {
	r = &result{entry: e, start: time.Now()}
	if e.Mode == Audit {
		cc := *c
		cc.Payload, cc.Args = bytes.Clone(c.Payload), bytes.Clone(c.Args)
		c = &cc
	}
	defer func() {
		if recover() != nil {
			r.v, r.failed, r.end = Verdict{}, DecisionError, time.Now()
		}
	}()
	cctx := ctx
	// An in-process check (a built-in) answers in microseconds and does
	// not wait on anything: no timer for it.
	if e.Timeout > 0 && e.Blocking {
		var cancel context.CancelFunc
		cctx, cancel = context.WithTimeout(ctx, e.Timeout)
		defer cancel()
	}
	v, err := e.Checker.Check(cctx, c, p)
	r.end = time.Now()
	if err != nil {
		r.failed = DecisionError
		if ctx.Err() == nil && (errors.Is(err, context.DeadlineExceeded) || cctx.Err() == context.DeadlineExceeded) {
			r.failed = DecisionTimeout
		}
		return r
	}
	r.v = v
	return r
}

// runParallel runs the entries' checks concurrently (one inline) and
// returns their results in the entries' order.
func runParallel(ctx context.Context, es []*Entry, c *Call, p Phase) []*result {
	res := make([]*result, len(es))
	if len(es) == 1 {
		res[0] = runOne(ctx, es[0], c, p)
		return res
	}
	var wg sync.WaitGroup
	for i, e := range es {
		wg.Go(func() { res[i] = runOne(ctx, e, c, p) })
	}
	wg.Wait()
	return res
}

// failReason is the reason a failed check refuses with: never the error's
// text, which may hold what the check saw.
func failReason(failed string) string {
	if failed == DecisionTimeout {
		return "the check timed out (fail closed)"
	}
	return "the check failed (fail closed)"
}

// wouldDecision is an audit-mode entry's record decision for v.
func wouldDecision(v Verdict) string {
	switch {
	case v.Action == Deny:
		return DecisionWouldDeny
	case v.Action == Mutate && len(v.Payload) > 0, (v.Action == Allow || v.Action == Ask) && len(v.Payload) > 0:
		return DecisionWouldMutate
	}
	return Pass.String()
}

// denyText is the text of the error result a Deny in Response leaves.
func denyText(e *Entry, reason string) string {
	if reason == "" {
		return (&RefusedError{By: e.Name, Kind: e.Kind}).Error()
	}
	return capString(reason, MaxContext)
}
