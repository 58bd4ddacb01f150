package sep_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/intercept"
	"github.com/mcphost/mcphost/host/intercept/sep"
)

// conformanceFixture is one of the WG's protocol fixtures
// (testdata/conformance/README.md).
type conformanceFixture struct {
	ID           string `json:"id"`
	Requirement  string `json:"requirement"`
	Interceptors []struct {
		Name     string   `json:"name"`
		Type     string   `json:"type"`
		Behavior string   `json:"behavior"`
		Events   []string `json:"events"`
		Phases   string   `json:"phases"`
		Mode     string   `json:"mode"`
		FailOpen bool     `json:"failOpen"`
	} `json:"interceptors"`
	Steps []struct {
		Op      string          `json:"op"`
		Event   *string         `json:"event"`
		Phase   string          `json:"phase"`
		Params  json.RawMessage `json:"params"`
		Payload json.RawMessage `json:"payload"`
		Expect  struct {
			Canonical             string `json:"canonical"`
			ErrorCode             *int64 `json:"errorCode"`
			Decision              string `json:"decision"`
			FinalPayloadCanonical string `json:"finalPayloadCanonical"`
		} `json:"expect"`
	} `json:"steps"`
	Volatile []string `json:"volatile"`
}

// TestConformanceFixtures replays the WG's protocol fixtures against the
// real interceptor server through this package.
func TestConformanceFixtures(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join("testdata", "conformance", "protocol", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var fx conformanceFixture
		if err := json.Unmarshal(b, &fx); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		t.Run(strings.TrimPrefix(fx.ID, "protocol/"), func(t *testing.T) {
			t.Parallel()
			var args []string
			for _, ic := range fx.Interceptors {
				spec := ic.Name + "=" + ic.Behavior + ",type=" + ic.Type + ",events=" + strings.Join(ic.Events, "|") + ",phases=" + ic.Phases
				if ic.Mode != "" {
					spec += ",mode=" + ic.Mode
				}
				if ic.FailOpen {
					spec += ",failOpen=true"
				}
				args = append(args, "-i", spec)
			}
			f := newFixture(t, config.Interceptor{}, args...)
			do, _ := f.h.SEPDo()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			for i, st := range fx.Steps {
				switch st.Op {
				case "list":
					p := &sep.ListParams{}
					if st.Event != nil {
						p.Event = *st.Event
					}
					var raw []byte
					err := do(ctx, "ic", func(ctx context.Context, cs *mcp.ClientSession) error {
						r, err := mcp.CallCustomMethod[*sep.ListParams, *sep.RawResult](ctx, cs, sep.MethodList, p)
						if err == nil {
							raw = r.Raw
						}
						return err
					})
					if err != nil {
						t.Fatalf("step %d: %v", i, err)
					}
					if got := scrubbed(t, raw, fx.Volatile); got != st.Expect.Canonical {
						t.Errorf("step %d: list\n got %s\nwant %s", i, got, st.Expect.Canonical)
					}
					ds, err := sep.DecodeList(raw)
					if err != nil {
						t.Fatalf("step %d: %v", i, err)
					}
					for _, d := range ds {
						if !d.Covers(intercept.EventToolsCall, sep.PhaseRequest) || !d.Covers(intercept.EventToolsCall, sep.PhaseResponse) {
							t.Errorf("step %d: %s: hooks %+v", i, d.Name, d.Hooks)
						}
					}
				case "invoke":
					var p sep.InvokeParams
					if err := json.Unmarshal(st.Params, &p); err != nil {
						t.Fatal(err)
					}
					var raw []byte
					err := do(ctx, "ic", func(ctx context.Context, cs *mcp.ClientSession) error {
						r, err := mcp.CallCustomMethod[*sep.InvokeParams, *sep.RawResult](ctx, cs, sep.MethodInvoke, &p)
						if err == nil {
							raw = r.Raw
						}
						return err
					})
					if st.Expect.ErrorCode != nil {
						var je *jsonrpc.Error
						if !errors.As(err, &je) || je.Code != *st.Expect.ErrorCode {
							t.Errorf("step %d: error %v, want code %d", i, err, *st.Expect.ErrorCode)
						}
						continue
					}
					if err != nil {
						t.Fatalf("step %d: %v", i, err)
					}
					if got := scrubbed(t, raw, fx.Volatile); got != st.Expect.Canonical {
						t.Errorf("step %d: invoke\n got %s\nwant %s", i, got, st.Expect.Canonical)
					}
					if _, err := sep.DecodeResult(raw); err != nil {
						t.Errorf("step %d: %v", i, err)
					}
				case "apply":
					decision, final := apply(t, f, *st.Event, st.Phase, st.Payload)
					if decision != st.Expect.Decision {
						t.Errorf("step %d: decision %s, want %s", i, decision, st.Expect.Decision)
					}
					if st.Expect.FinalPayloadCanonical != "" && final != st.Expect.FinalPayloadCanonical {
						t.Errorf("step %d: final payload\n got %s\nwant %s", i, final, st.Expect.FinalPayloadCanonical)
					}
				default:
					t.Fatalf("step %d: op %q not supported", i, st.Op)
				}
			}
		})
	}
}

// apply runs one lifecycle event through the interceptor block's checker:
// "allow" iff it completed, and the payload after applied mutations in the
// SEP's shape.
func apply(t *testing.T, f *fixture, event, phase string, payload json.RawMessage) (decision, final string) {
	t.Helper()
	c := &intercept.Call{Event: event, Server: "demo"}
	p := intercept.Request
	if phase == sep.PhaseResponse {
		p = intercept.Response
		c.Payload = payload
	} else {
		var params struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		}
		if err := json.Unmarshal(payload, &params); err != nil {
			t.Fatal(err)
		}
		c.Original, c.Name, c.Args, c.Payload = params.Name, "mcp__demo__"+params.Name, params.Arguments, params.Arguments
	}
	v, err := f.check(t, c, p)
	if err != nil || v.Action == intercept.Deny {
		return "deny", ""
	}
	out := c.Payload
	if v.Action == intercept.Mutate {
		out = v.Payload
	}
	if p == intercept.Request {
		out, _ = json.Marshal(map[string]any{"name": c.Original, "arguments": out})
	}
	return "allow", scrubbed(t, out, nil)
}

// scrubbed is b without the volatile keys (at any depth), as canonical
// JSON (sorted keys, no whitespace; the fixtures need no more of RFC 8785).
func scrubbed(t *testing.T, b []byte, volatile []string) string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	var scrub func(any)
	scrub = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for _, k := range volatile {
				delete(x, k)
			}
			for _, e := range x {
				scrub(e)
			}
		case []any:
			for _, e := range x {
				scrub(e)
			}
		}
	}
	scrub(v)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSuffix(buf.String(), "\n")
}
