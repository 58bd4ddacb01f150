package sep

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The wire of SEP-2624 revision Revision: the shape of the WG's conformance
// fixtures (experimental-ext-interceptors conformance/fixtures/protocol,
// 2026-09). Decoding is tolerant of the older shapes the WG's Go SDK and the
// SEP's prose still show: a descriptor's single "hook" object (with phase
// "both") besides "hooks", and a result that nests its outcome under
// "validation" or "mutation" besides the flat one.

// JSON-RPC methods of an interceptor server.
const (
	MethodList   = "interceptors/list"
	MethodInvoke = "interceptor/invoke"
)

// Interceptor types.
const (
	TypeValidation = "validation"
	TypeMutation   = "mutation"
)

// Phases on the wire.
const (
	PhaseRequest  = "request"
	PhaseResponse = "response"
	PhaseBoth     = "both"
)

// Severities of a validation.
const (
	SeverityInfo  = "info"
	SeverityWarn  = "warn"
	SeverityError = "error"
)

// ModeAudit is a descriptor's mode that never blocks.
const ModeAudit = "audit"

// ErrMalformed is matched by every error of a list or result that does not
// follow the wire.
var ErrMalformed = errors.New("malformed interceptor server answer")

// ListParams are the params of interceptors/list.
type ListParams struct {
	mcp.ParamsBase
	// Event filters the list to the interceptors hooking that event ("":
	// all).
	Event string `json:"event,omitempty"`
}

// InvokeParams are the params of interceptor/invoke.
type InvokeParams struct {
	mcp.ParamsBase
	Name  string `json:"name"`
	Event string `json:"event"`
	Phase string `json:"phase"`
	// Payload is the request params (tools/call: {"name","arguments"}) in
	// the request phase, the result in the response phase.
	Payload   json.RawMessage `json:"payload"`
	TimeoutMs int64           `json:"timeoutMs,omitempty"`
	Config    json.RawMessage `json:"config,omitempty"`
	Context   *InvokeContext  `json:"context,omitempty"`
}

// InvokeContext is an invocation's context.
type InvokeContext struct {
	Principal *Principal `json:"principal,omitempty"`
	SessionID string     `json:"sessionId,omitempty"`
	TraceID   string     `json:"traceId,omitempty"`
	SpanID    string     `json:"spanId,omitempty"`
	// Timestamp is RFC 3339 with nanoseconds, UTC.
	Timestamp string `json:"timestamp"`
}

// Principal is who the operation is for: type "user" (ID the subject,
// Claims its issuer and groups) or "anonymous".
type Principal struct {
	Type   string         `json:"type"`
	ID     string         `json:"id,omitempty"`
	Claims map[string]any `json:"claims,omitempty"`
}

// RawResult is a result kept as the bytes the server sent: the decoding is
// DecodeList's or DecodeResult's, tolerant of the older shapes.
type RawResult struct {
	mcp.ResultBase
	Raw json.RawMessage
}

// UnmarshalJSON keeps b.
func (r *RawResult) UnmarshalJSON(b []byte) error {
	r.Raw = append(r.Raw[:0], b...)
	return nil
}

// MarshalJSON returns the kept bytes.
func (r *RawResult) MarshalJSON() ([]byte, error) {
	if len(r.Raw) == 0 {
		return []byte("{}"), nil
	}
	return r.Raw, nil
}

// Hook is one hook of a descriptor: events, and one phase (a "both" on the
// wire is two hooks).
type Hook struct {
	Events []string
	Phase  string // PhaseRequest or PhaseResponse
}

// Priority is a descriptor's priorityHint per phase (lower runs first).
type Priority struct{ Request, Response int64 }

// Descriptor is one interceptor of an interceptors/list result.
type Descriptor struct {
	Name, Version, Description string
	Type                       string // TypeValidation, TypeMutation, or what the server said
	Hooks                      []Hook
	Mode                       string
	FailOpen                   bool
	Priority                   Priority
}

// Covers reports whether d hooks event in phase (PhaseRequest or
// PhaseResponse). "*" matches every event, "*/request" and "*/response"
// every event of their phase, "ns/*" every event of namespace ns.
func (d *Descriptor) Covers(event, phase string) bool {
	for _, h := range d.Hooks {
		if h.Phase != phase {
			continue
		}
		for _, e := range h.Events {
			if eventMatches(e, event, phase) {
				return true
			}
		}
	}
	return false
}

func eventMatches(pattern, event, phase string) bool {
	switch pattern {
	case event, "*":
		return true
	case "*/request":
		return phase == PhaseRequest
	case "*/response":
		return phase == PhaseResponse
	}
	if n := len(pattern); n >= 2 && pattern[n-2:] == "/*" {
		ns := pattern[:n-1] // "tools/"
		return len(event) > len(ns) && event[:len(ns)] == ns
	}
	return false
}

// PriorityFor returns d's priorityHint for phase.
func (d *Descriptor) PriorityFor(phase string) int64 {
	if phase == PhaseResponse {
		return d.Priority.Response
	}
	return d.Priority.Request
}

type wireHook struct {
	Events []string `json:"events"`
	Phase  string   `json:"phase"`
}

type wireDescriptor struct {
	Name         string          `json:"name"`
	Version      string          `json:"version"`
	Description  string          `json:"description"`
	Type         string          `json:"type"`
	Hooks        []wireHook      `json:"hooks"`
	Hook         *wireHook       `json:"hook"`
	Mode         string          `json:"mode"`
	FailOpen     bool            `json:"failOpen"`
	PriorityHint json.RawMessage `json:"priorityHint"`
}

// DecodeList decodes an interceptors/list result.
func DecodeList(b []byte) ([]Descriptor, error) {
	var l struct {
		Interceptors []json.RawMessage `json:"interceptors"`
	}
	if err := json.Unmarshal(b, &l); err != nil {
		return nil, fmt.Errorf("%w: interceptors/list: %v", ErrMalformed, err)
	}
	out := make([]Descriptor, 0, len(l.Interceptors))
	seen := map[string]bool{}
	for i, raw := range l.Interceptors {
		d, err := decodeDescriptor(raw)
		if err != nil {
			return nil, fmt.Errorf("%w: interceptors/list: interceptor %d: %v", ErrMalformed, i, err)
		}
		if seen[d.Name] {
			return nil, fmt.Errorf("%w: interceptors/list: interceptor %q listed twice", ErrMalformed, d.Name)
		}
		seen[d.Name] = true
		out = append(out, d)
	}
	return out, nil
}

func decodeDescriptor(raw json.RawMessage) (Descriptor, error) {
	var w wireDescriptor
	if err := json.Unmarshal(raw, &w); err != nil {
		return Descriptor{}, err
	}
	if w.Name == "" {
		return Descriptor{}, errors.New("no name")
	}
	d := Descriptor{Name: w.Name, Version: w.Version, Description: w.Description, Type: w.Type, Mode: w.Mode, FailOpen: w.FailOpen}
	if d.Type == "" {
		return Descriptor{}, fmt.Errorf("%q has no type", w.Name)
	}
	hooks := w.Hooks
	if w.Hook != nil {
		hooks = append(hooks, *w.Hook)
	}
	for _, h := range hooks {
		switch h.Phase {
		case PhaseRequest, PhaseResponse:
			d.Hooks = append(d.Hooks, Hook{Events: h.Events, Phase: h.Phase})
		case PhaseBoth:
			d.Hooks = append(d.Hooks, Hook{Events: h.Events, Phase: PhaseRequest}, Hook{Events: h.Events, Phase: PhaseResponse})
		default:
			return Descriptor{}, fmt.Errorf("%q: unknown phase %q", w.Name, h.Phase)
		}
	}
	p, err := decodePriority(w.PriorityHint)
	if err != nil {
		return Descriptor{}, fmt.Errorf("%q: priorityHint: %v", w.Name, err)
	}
	d.Priority = p
	return d, nil
}

// decodePriority reads a priorityHint: absent or null (0), a number (both
// phases), or {"request"?, "response"?}; each a 32-bit signed integer.
func decodePriority(raw json.RawMessage) (Priority, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return Priority{}, nil
	}
	if raw[0] == '{' {
		var o struct {
			Request  *json.Number `json:"request"`
			Response *json.Number `json:"response"`
		}
		if err := json.Unmarshal(raw, &o); err != nil {
			return Priority{}, err
		}
		var p Priority
		var err error
		if o.Request != nil {
			if p.Request, err = int32Of(*o.Request); err != nil {
				return Priority{}, err
			}
		}
		if o.Response != nil {
			if p.Response, err = int32Of(*o.Response); err != nil {
				return Priority{}, err
			}
		}
		return p, nil
	}
	var n json.Number
	if err := json.Unmarshal(raw, &n); err != nil {
		return Priority{}, err
	}
	v, err := int32Of(n)
	if err != nil {
		return Priority{}, err
	}
	return Priority{Request: v, Response: v}, nil
}

func int32Of(n json.Number) (int64, error) {
	v, err := n.Int64()
	if err != nil || v < math.MinInt32 || v > math.MaxInt32 {
		return 0, fmt.Errorf("%s is not a 32-bit integer", n)
	}
	return v, nil
}

// Message is one message of a validation.
type Message struct {
	Path     string `json:"path,omitempty"`
	Message  string `json:"message"`
	Severity string `json:"severity,omitempty"`
}

// Result is an interceptor/invoke result, whatever its shape on the wire.
type Result struct {
	Interceptor, Type, Phase string
	// Valid, Severity and Messages are a validation's: Valid is nil when
	// the result has none.
	Valid    *bool
	Severity string
	Messages []Message
	// Modified (nil: absent) and Payload are a mutation's.
	Modified *bool
	Payload  json.RawMessage
}

type wireValidation struct {
	Valid    *bool     `json:"valid"`
	Severity string    `json:"severity"`
	Messages []Message `json:"messages"`
}

type wireResult struct {
	Interceptor string `json:"interceptor"`
	Type        string `json:"type"`
	Phase       string `json:"phase"`
	wireValidation
	Modified   *bool           `json:"modified"`
	Payload    json.RawMessage `json:"payload"`
	Validation *wireValidation `json:"validation"`
	Mutation   *struct {
		Modified *bool `json:"modified"`
	} `json:"mutation"`
}

// DecodeResult decodes an interceptor/invoke result: the flat shape of the
// fixtures, or the older nested one.
func DecodeResult(b []byte) (Result, error) {
	var w wireResult
	if err := json.Unmarshal(b, &w); err != nil {
		return Result{}, fmt.Errorf("%w: interceptor/invoke: %v", ErrMalformed, err)
	}
	r := Result{Interceptor: w.Interceptor, Type: w.Type, Phase: w.Phase,
		Valid: w.Valid, Severity: w.Severity, Messages: w.Messages, Modified: w.Modified}
	if v := w.Validation; v != nil {
		if r.Valid == nil {
			r.Valid = v.Valid
		}
		if r.Severity == "" {
			r.Severity = v.Severity
		}
		if r.Messages == nil {
			r.Messages = v.Messages
		}
	}
	if m := w.Mutation; m != nil && r.Modified == nil {
		r.Modified = m.Modified
	}
	if p := bytes.TrimSpace(w.Payload); len(p) > 0 && string(p) != "null" {
		r.Payload = w.Payload
	}
	return r, nil
}

// Blocks reports whether r is a validation that blocks: valid false with
// severity "error". A refusal that names no severity, on the result or
// on any message, blocks too: an interceptor that says "not valid" without
// saying how bad is taken at its word (fail closed).
func (r *Result) Blocks() bool {
	if r.Valid == nil || *r.Valid {
		return false
	}
	switch r.Severity {
	case SeverityError:
		return true
	case SeverityWarn, SeverityInfo:
		return false
	}
	if len(r.Messages) == 0 {
		return true
	}
	for _, m := range r.Messages {
		if m.Severity == SeverityError || m.Severity == "" {
			return true
		}
	}
	return false
}

// Reason is the first error message of a validation ("" for none).
func (r *Result) Reason() string {
	for _, m := range r.Messages {
		if m.Severity == SeverityError || m.Severity == "" {
			return m.Message
		}
	}
	if len(r.Messages) > 0 {
		return r.Messages[0].Message
	}
	return ""
}
