// Command interceptorserver is a SEP-2624 interceptor server for tests: a
// go-sdk MCP server on stdio that answers interceptors/list and
// interceptor/invoke in the wire of the MCP Interceptors WG's conformance
// fixtures (revision sep-2624/2026-09), with interceptors bound to the WG's
// conformance behaviours and chosen by flags:
//
//	interceptorserver -i 'conf/deny-all=deny-all' \
//	  -i 'conf/upper=uppercase-note,mode=audit,priority=5,phases=request' \
//	  -tool leak -log /tmp/invokes.jsonl
//
// Each -i is NAME=BEHAVIOUR followed by ",key=value" options: events
// (separated by '|', default tools/call), phases (request, response or
// both, the default), mode (enforce or audit), failOpen (true or false),
// priority (N, or REQ:RESP). Behaviours: allow-all, deny-all, require-note,
// require-uppercase-note, uppercase-note, crash (the handler fails), exit
// (the process exits during the invoke), slow (sleeps -slow, then allows),
// warn (not valid, severity warn), ghost (listed, but unknown to invoke:
// -32602). "note" is the payload's arguments.note, or its
// structuredContent.note (a tools/call result).
//
// -old-shape answers in the older shape of the WG's Go SDK ("hook" object,
// results nested under "validation" / "mutation"). -tool NAME also serves a
// tool, which an interceptor server should not (the host must not serve
// it). -log FILE appends every request as a JSON line: {"method","params"}.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type interceptor struct {
	name, behaviour, typ string
	events               []string
	phases               string
	mode                 string
	failOpen             bool
	priority             any // nil, a number, or {"request","response"}
}

type multi []string

func (m *multi) String() string     { return strings.Join(*m, " ") }
func (m *multi) Set(s string) error { *m = append(*m, s); return nil }

func main() {
	var specs, tools multi
	flag.Var(&specs, "i", "an interceptor: NAME=BEHAVIOUR[,key=value…] (repeatable)")
	flag.Var(&tools, "tool", "a tool to serve too (repeatable)")
	oldShape := flag.Bool("old-shape", false, "answer in the older Go SDK shape")
	logFile := flag.String("log", "", "append each request ({method, params}) to this file, one JSON line each")
	slow := flag.Duration("slow", 30*time.Second, "how long the slow behaviour sleeps")
	flag.Parse()
	var ics []*interceptor
	for _, s := range specs {
		ic, err := parse(s)
		if err != nil {
			fmt.Fprintln(os.Stderr, "interceptorserver:", err)
			os.Exit(2)
		}
		ics = append(ics, ic)
	}
	srv := &server{ics: ics, old: *oldShape, slow: *slow, log: *logFile}
	s := mcp.NewServer(&mcp.Implementation{Name: "interceptorserver", Version: "1"}, nil)
	for _, t := range tools {
		mcp.AddTool(s, &mcp.Tool{Name: t, Description: "a tool an interceptor server should not expose"},
			func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "leaked"}}}, nil, nil
			})
	}
	if err := mcp.AddReceivingCustomMethod(s, "interceptors/list", srv.list); err != nil {
		panic(err)
	}
	if err := mcp.AddReceivingCustomMethod(s, "interceptor/invoke", srv.invoke); err != nil {
		panic(err)
	}
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "interceptorserver:", err)
		os.Exit(1)
	}
}

func parse(spec string) (*interceptor, error) {
	parts := strings.Split(spec, ",")
	name, behaviour, ok := strings.Cut(parts[0], "=")
	if !ok || name == "" {
		return nil, fmt.Errorf("-i %q: want NAME=BEHAVIOUR", spec)
	}
	ic := &interceptor{name: name, behaviour: behaviour, typ: "validation", events: []string{"tools/call"}, phases: "both"}
	switch behaviour {
	case "allow-all", "deny-all", "require-note", "require-uppercase-note", "crash", "exit", "slow", "warn", "ghost":
	case "uppercase-note":
		ic.typ = "mutation"
	default:
		return nil, fmt.Errorf("-i %q: unknown behaviour %q", spec, behaviour)
	}
	for _, kv := range parts[1:] {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "events":
			ic.events = strings.Split(v, "|")
		case "phases":
			ic.phases = v
		case "mode":
			ic.mode = v
		case "failOpen":
			ic.failOpen = v == "true"
		case "type":
			ic.typ = v
		case "priority":
			if r, s, ok := strings.Cut(v, ":"); ok {
				rn, err1 := strconv.Atoi(r)
				sn, err2 := strconv.Atoi(s)
				if err1 != nil || err2 != nil {
					return nil, fmt.Errorf("-i %q: bad priority %q", spec, v)
				}
				ic.priority = map[string]int{"request": rn, "response": sn}
			} else {
				n, err := strconv.Atoi(v)
				if err != nil {
					return nil, fmt.Errorf("-i %q: bad priority %q", spec, v)
				}
				ic.priority = n
			}
		default:
			return nil, fmt.Errorf("-i %q: unknown option %q", spec, k)
		}
	}
	return ic, nil
}

type server struct {
	ics  []*interceptor
	old  bool
	slow time.Duration
	log  string
	mu   sync.Mutex // log
}

// listParams are interceptors/list's.
type listParams struct {
	mcp.ParamsBase
	Event string `json:"event,omitempty"`
}

// invokeParams are interceptor/invoke's.
type invokeParams struct {
	mcp.ParamsBase
	Name      string          `json:"name"`
	Event     string          `json:"event"`
	Phase     string          `json:"phase"`
	Payload   json.RawMessage `json:"payload"`
	TimeoutMs int64           `json:"timeoutMs,omitempty"`
	Config    json.RawMessage `json:"config,omitempty"`
	Context   json.RawMessage `json:"context,omitempty"`
}

// result is any JSON object as a go-sdk result.
type result struct {
	mcp.ResultBase
	v any
}

func (r *result) MarshalJSON() ([]byte, error) { return json.Marshal(r.v) }

func (s *server) list(_ context.Context, _ *mcp.ServerSession, p *listParams) (*result, error) {
	s.record("interceptors/list", p)
	out := []any{}
	for _, ic := range s.ics {
		if p != nil && p.Event != "" && !hooks(ic, p.Event) {
			continue
		}
		d := map[string]any{"name": ic.name, "type": ic.typ}
		if s.old {
			d["hook"] = map[string]any{"events": ic.events, "phase": ic.phases}
		} else {
			var hs []any
			for _, ph := range []string{"request", "response"} {
				if ic.phases == ph || ic.phases == "both" {
					hs = append(hs, map[string]any{"events": ic.events, "phase": ph})
				}
			}
			d["hooks"] = hs
		}
		if ic.mode != "" {
			d["mode"] = ic.mode
		}
		if ic.failOpen {
			d["failOpen"] = true
		}
		if ic.priority != nil {
			d["priorityHint"] = ic.priority
		}
		out = append(out, d)
	}
	return &result{v: map[string]any{"interceptors": out}}, nil
}

func hooks(ic *interceptor, event string) bool {
	for _, e := range ic.events {
		if e == event || e == "*" {
			return true
		}
	}
	return false
}

func (s *server) invoke(ctx context.Context, _ *mcp.ServerSession, p *invokeParams) (*result, error) {
	s.record("interceptor/invoke", p)
	var ic *interceptor
	for _, c := range s.ics {
		if c.name == p.Name && c.behaviour != "ghost" {
			ic = c
		}
	}
	if ic == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown interceptor %q", p.Name)}
	}
	start := time.Now()
	var payload map[string]any
	_ = json.Unmarshal(p.Payload, &payload)
	note, hasNote := noteOf(payload)
	valid, msg := true, ""
	switch ic.behaviour {
	case "deny-all":
		valid, msg = false, "denied by policy"
	case "require-note":
		if !hasNote || note == "" {
			valid, msg = false, "note is required"
		}
	case "require-uppercase-note":
		if !hasNote || note != strings.ToUpper(note) {
			valid, msg = false, "note must be uppercase"
		}
	case "warn":
		return s.validation(ic, p, start, false, "warn", "just so you know"), nil
	case "crash":
		return nil, fmt.Errorf("interceptor crashed")
	case "exit":
		os.Exit(3)
	case "slow":
		select {
		case <-time.After(s.slow):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	case "uppercase-note":
		modified := false
		if hasNote {
			setNote(payload, strings.ToUpper(note))
			modified = true
		}
		out := json.RawMessage(p.Payload)
		if modified {
			out, _ = json.Marshal(payload)
		}
		if s.old {
			return &result{v: map[string]any{"interceptor": ic.name, "type": "mutation", "phase": p.Phase,
				"durationMs": time.Since(start).Milliseconds(), "mutation": map[string]any{"modified": modified}, "payload": out}}, nil
		}
		return &result{v: map[string]any{"interceptor": ic.name, "type": "mutation", "phase": p.Phase,
			"durationMs": time.Since(start).Milliseconds(), "modified": modified, "payload": out}}, nil
	}
	if valid {
		return s.validation(ic, p, start, true, "", ""), nil
	}
	return s.validation(ic, p, start, false, "error", msg), nil
}

func (s *server) validation(ic *interceptor, p *invokeParams, start time.Time, valid bool, severity, msg string) *result {
	v := map[string]any{"valid": valid}
	if severity != "" {
		v["severity"] = severity
		v["messages"] = []any{map[string]any{"message": msg, "severity": severity}}
	}
	r := map[string]any{"interceptor": ic.name, "type": "validation", "phase": p.Phase, "durationMs": time.Since(start).Milliseconds()}
	if s.old {
		r["validation"] = v
	} else {
		for k, x := range v {
			r[k] = x
		}
	}
	return &result{v: r}
}

// noteOf returns the payload's arguments.note, or structuredContent.note.
func noteOf(payload map[string]any) (string, bool) {
	for _, k := range []string{"arguments", "structuredContent"} {
		if m, ok := payload[k].(map[string]any); ok {
			if n, ok := m["note"].(string); ok {
				return n, true
			}
		}
	}
	return "", false
}

func setNote(payload map[string]any, note string) {
	for _, k := range []string{"arguments", "structuredContent"} {
		if m, ok := payload[k].(map[string]any); ok {
			if _, ok := m["note"].(string); ok {
				m["note"] = note
				return
			}
		}
	}
}

func (s *server) record(method string, p any) {
	if s.log == "" {
		return
	}
	b, err := json.Marshal(map[string]any{"method": method, "params": p})
	if err != nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	f, err := os.OpenFile(s.log, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return
	}
	defer f.Close()
	f.Write(append(b, '\n'))
}
