// Package wire is the gateway's view of JSON-RPC messages on the wire: a
// message is parsed once into a Message (its kind, method, id, the members
// of its envelope, params and params._meta, and for tools/call the parts
// the relay reads) that every later step reads instead of scanning the
// bytes again; and it is the one place where the gateway writes JSON-RPC
// envelopes of its own (errors, results, the client's id spliced into an
// upstream's response, the requests and notifications it sends).
//
// Parsing holds a message to the strict rules of internal/rawjson (one
// JSON object; no duplicate or case-variant member names, no escaped or
// non-ASCII names in the envelope, params and params._meta; nothing after
// the object), so that policy and routing act on exactly the bytes that
// are forwarded. Nothing is decoded that is only forwarded: arguments and
// results stay raw.
//
// The package knows nothing of the gateway's fronts (no net/http) nor of
// its registry: a tool call's name is resolved by the gateway, which keeps
// the result in the Message (SetTool) for the later steps.
package wire

import (
	"bytes"
	"slices"

	"github.com/mcphost/mcphost/internal/rawjson"
)

// The strict scan's errors (see Parse); match them with errors.Is.
var (
	// ErrSyntax is input that is not valid JSON.
	ErrSyntax = rawjson.ErrSyntax
	// ErrNotObject is a message that is not one JSON object.
	ErrNotObject = rawjson.ErrNotObject
	// ErrDuplicate is a duplicate or case-variant member name.
	ErrDuplicate = rawjson.ErrDuplicate
	// ErrName is a member name with an escape or a non-ASCII byte (also
	// an ErrSyntax).
	ErrName = rawjson.ErrName
	// ErrTooDeep is nesting beyond rawjson.MaxDepth.
	ErrTooDeep = rawjson.ErrTooDeep
	// ErrInvalidID is an id that is neither a string nor an integer
	// within ±2^53 (Message.IDKey).
	ErrInvalidID = rawjson.ErrInvalidID
)

// Member is one member of an object: its raw name and value, and the
// value's offsets in the parsed bytes.
type Member = rawjson.Member

// Kind is what a message is, by the members it has.
type Kind uint8

const (
	// KindResponse is a message without a method (a result or an error).
	KindResponse Kind = iota
	// KindRequest is a message with a method and an id.
	KindRequest
	// KindNotification is a message with a method and no id.
	KindNotification
)

func (k Kind) String() string {
	switch k {
	case KindRequest:
		return "request"
	case KindNotification:
		return "notification"
	}
	return "response"
}

// inline is how many members of each object a Message holds without
// allocating.
const inline = 8

// members holds the members of one object: in place when they fit, else
// in a slice of their own.
type members struct {
	arr   [inline]rawjson.Member
	n     int
	extra []rawjson.Member
}

// set scans obj into m.
func (m *members) set(obj []byte) error {
	var arr [inline]rawjson.Member
	ms, err := rawjson.Members(arr[:0], obj)
	if len(ms) > inline {
		// (A copy: m must not point into this frame, nor into itself,
		// for a Message to stay on its caller's stack.)
		m.extra = slices.Clone(ms)
	} else {
		m.n = copy(m.arr[:], ms)
	}
	return err
}

func (m *members) list() []rawjson.Member {
	if m.extra != nil {
		return m.extra
	}
	return m.arr[:m.n]
}

// Message is one JSON-RPC message, parsed once (Parse). It refers to the
// parsed bytes and must not outlive them. It holds its members in place,
// so a Message declared in a function stays on its stack: pass it by
// pointer, and keep what outlives the call (the id, the name) apart.
type Message struct {
	// Raw is the message as parsed.
	Raw  []byte
	Kind Kind
	// Method is the raw value of the method member (nil if none), ID
	// that of the id member (nil if none), Params that of the params
	// member (nil if none).
	Method, ID, Params []byte

	env, params, meta members
	hasMeta           bool // params is an object with an object _meta

	idKey  string
	idErr  error
	idDone bool

	call     ToolCall
	isCall   bool
	resolved string // the tool's canonical name (SetTool)
	hasTool  bool
}

// Parse parses one JSON-RPC message b into m, holding it to the strict
// rules (see the package doc). On error m is left partly filled and the
// error is one of ErrSyntax (ErrName), ErrNotObject, ErrDuplicate or
// ErrTooDeep. A tools/call request's parts are read too (Message.Call).
func Parse(m *Message, b []byte) error {
	*m = Message{Raw: b}
	if err := m.env.set(b); err != nil {
		return err
	}
	hasMethod := false
	for _, e := range m.env.list() {
		switch string(e.Key) {
		case "method":
			m.Method, hasMethod = e.Value, true
		case "id":
			m.ID = e.Value
		case "params":
			m.Params = e.Value
		}
	}
	switch {
	case !hasMethod:
		m.Kind = KindResponse
	case m.ID != nil:
		m.Kind = KindRequest
	default:
		m.Kind = KindNotification
	}
	if len(m.Params) == 0 || m.Params[0] != '{' {
		return nil
	}
	if err := m.params.set(m.Params); err != nil {
		return err
	}
	if meta, ok := rawjson.Find(m.params.list(), "_meta"); ok && len(meta.Value) > 0 && meta.Value[0] == '{' {
		if err := m.meta.set(meta.Value); err != nil {
			return err
		}
		m.hasMeta = true
	}
	if m.Kind == KindRequest && m.IsMethod("tools/call") {
		m.isCall = true
		m.call = readCall(m)
	}
	return nil
}

// Members are the members of the envelope, in order.
func (m *Message) Members() []rawjson.Member { return m.env.list() }

// ParamsMembers are the members of params when it is an object (else
// none), in order.
func (m *Message) ParamsMembers() []rawjson.Member { return m.params.list() }

// Meta are the members of params._meta when it is an object (else none),
// in order.
func (m *Message) Meta() []rawjson.Member {
	if !m.hasMeta {
		return nil
	}
	return m.meta.list()
}

// Member returns the envelope's member named key.
func (m *Message) Member(key string) (rawjson.Member, bool) { return rawjson.Find(m.env.list(), key) }

// Param returns the member of params named key.
func (m *Message) Param(key string) (rawjson.Member, bool) {
	return rawjson.Find(m.params.list(), key)
}

// IsMethod reports whether the method is name, written without escapes
// (as the gateway routes methods: an escaped spelling is left to the
// go-sdk, which decodes it).
func (m *Message) IsMethod(name string) bool {
	v := m.Method
	return len(v) == len(name)+2 && v[0] == '"' && v[len(v)-1] == '"' && string(v[1:len(v)-1]) == name
}

// MethodIs reports whether the method is name, escaped or not.
func (m *Message) MethodIs(name string) bool { return rawjson.Is(m.Method, name) }

// IDKey is the key of the message's id as a JSON-RPC peer compares ids
// (rawjson.IDKey: 50, 50.0 and 5e1 are one id), computed once. A message
// without an id, or with one that is not a string or an integer, is
// ErrInvalidID.
func (m *Message) IDKey() (string, error) {
	if !m.idDone {
		m.idDone = true
		if m.ID == nil {
			m.idErr = ErrInvalidID
		} else {
			m.idKey, m.idErr = rawjson.IDKey(m.ID)
		}
	}
	return m.idKey, m.idErr
}

// CancelledKey is the IDKey of the request a notifications/cancelled
// names (params.requestId), if m is one and names a valid id.
func (m *Message) CancelledKey() (string, bool) {
	if !m.IsMethod("notifications/cancelled") {
		return "", false
	}
	rid, ok := m.Param("requestId")
	if !ok {
		return "", false
	}
	key, err := rawjson.IDKey(rid.Value)
	return key, err == nil
}

// Body is a POSTed body: one message, or a batch (a JSON array) of them.
// Like a Message, it refers to the parsed bytes. Of a batch, only what the
// gateway's admission reads is kept (how many requests, how many of them
// open listen streams): a batch goes to the go-sdk as it is, and keeping a
// Message per element would let a body of tiny elements cost the gateway
// far more memory than its size.
type Body struct {
	// Batch reports an array.
	Batch bool
	one   [1]Message
	// Of a batch: its requests, and its subscriptions/listen requests.
	requests, listens int
}

// MethodListen is the method of a request that opens a stream lasting
// until its client ends it (2026-07-28's subscriptions/listen).
const MethodListen = "subscriptions/listen"

// ParseBody parses a body that is one message or a batch of them, each
// held to Parse's rules; the error is the first one met.
func ParseBody(b *Body, body []byte) error {
	*b = Body{}
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 || trimmed[0] != '[' {
		return Parse(&b.one[0], body)
	}
	b.Batch = true
	elems, err := rawjson.Elements(nil, trimmed)
	if err != nil {
		return err
	}
	m := &b.one[0] // (scratch: each element in turn)
	for _, e := range elems {
		if err := Parse(m, e); err != nil {
			return err
		}
		if m.Kind == KindRequest {
			b.requests++
			if m.MethodIs(MethodListen) {
				b.listens++
			}
		}
	}
	*m = Message{}
	return nil
}

// Requests is how many requests b holds (0 or 1 when b is not a batch).
func (b *Body) Requests() int {
	if !b.Batch {
		if b.one[0].Kind == KindRequest {
			return 1
		}
		return 0
	}
	return b.requests
}

// Listens is how many of b's requests are subscriptions/listen requests
// (however the method's name is escaped).
func (b *Body) Listens() int {
	if !b.Batch {
		if m := &b.one[0]; m.Kind == KindRequest && m.MethodIs(MethodListen) {
			return 1
		}
		return 0
	}
	return b.listens
}

// One is b's message when b is not a batch, else nil.
func (b *Body) One() *Message {
	if b.Batch {
		return nil
	}
	return &b.one[0]
}
