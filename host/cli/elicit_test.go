package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/permissions"
	"github.com/mcphost/mcphost/host/registry"
)

// formRequest is a form elicitation with a schema given as JSON (which
// keeps the order of its properties).
func formRequest(message, schema string) *mcp.ElicitRequest {
	p := &mcp.ElicitParams{Message: message}
	if schema != "" {
		p.RequestedSchema = json.RawMessage(schema)
	}
	return &mcp.ElicitRequest{Params: p}
}

// elicitScripted answers req with input as the terminal's typing.
func elicitScripted(t *testing.T, req *mcp.ElicitRequest, input string) (*mcp.ElicitResult, string, error) {
	t.Helper()
	var stderr strings.Builder
	a := &app{stdin: strings.NewReader(input), stderr: &stderr}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := a.elicitOnTerminal(ctx, "demo", req)
	return res, stderr.String(), err
}

func TestElicitForm(t *testing.T) {
	t.Parallel()
	obj := func(props string, required ...string) string {
		r, _ := json.Marshal(required)
		return `{"type":"object","properties":{` + props + `},"required":` + string(r) + `}`
	}
	accept := func(content map[string]any) *mcp.ElicitResult {
		return &mcp.ElicitResult{Action: "accept", Content: content}
	}
	const (
		colors   = `"color":{"type":"string","title":"Colour","enum":["red","green","blue"],"enumNames":["Red","Green","Blue"]}`
		sizes    = `"size":{"type":"string","oneOf":[{"const":"s","title":"Small"},{"const":"l","title":"Large"}]}`
		toppings = `"toppings":{"type":"array","items":{"type":"string","enum":["cheese","ham","olives"]},"minItems":1,"maxItems":2}`
		extras   = `"extras":{"type":"array","items":{"anyOf":[{"const":"x1","title":"Extra one"},{"const":"x2","title":"Extra two"}]}}`
	)
	for _, tc := range []struct {
		name   string
		schema string
		input  string
		want   *mcp.ElicitResult
		stderr []string // in this order
	}{
		{"string, too short then valid", obj(`"name":{"type":"string","title":"Name","description":"Your full name","minLength":2,"maxLength":5}`, "name"),
			"A\nAda Lovelace\nAda\n\n", accept(map[string]any{"name": "Ada"}),
			[]string{"Name (required; text, 2 to 5 characters)", "  | Your full name", "too short (at least 2 characters); try again", "too long (at most 5 characters)", "Send to demo:", "  Name: Ada"}},
		{"email", obj(`"email":{"type":"string","format":"email"}`),
			"ada\nAda <ada@example.com>\nada@example.com\n\n", accept(map[string]any{"email": "ada@example.com"}),
			[]string{"email (an email address)", "not an email address; try again", "not an email address; try again"}},
		{"uri", obj(`"site":{"type":"string","format":"uri"}`),
			"example.com\nhttps://example.com/x\ny\n", accept(map[string]any{"site": "https://example.com/x"}),
			[]string{"not a URI"}},
		{"date and date-time", obj(`"day":{"type":"string","format":"date"},"at":{"type":"string","format":"date-time"}`),
			"31/01/2025\n2025-01-31\n2025-01-31\n2025-01-31T14:30:00Z\n\n", accept(map[string]any{"day": "2025-01-31", "at": "2025-01-31T14:30:00Z"}),
			[]string{"not a date, YYYY-MM-DD", "not a date and time"}},
		{"integer in range", obj(`"age":{"type":"integer","minimum":0,"maximum":150}`, "age"),
			"abc\n1.5\n200\n42\n\n", accept(map[string]any{"age": 42}),
			[]string{"age (required; whole number, from 0 to 150)", "not a whole number", "not a whole number", "out of range (from 0 to 150)"}},
		{"number", obj(`"score":{"type":"number","minimum":0,"maximum":1}`),
			"x\nNaN\n2\n0.25\n\n", accept(map[string]any{"score": 0.25}),
			[]string{"not a number", "not a number", "out of range"}},
		{"defaults", obj(`"score":{"type":"number","default":0.5},"n":{"type":"integer","default":3},"on":{"type":"boolean","default":false},"s":{"type":"string","default":"hi"},`+
			`"color":{"type":"string","enum":["red","green"],"default":"green"},"many":{"type":"array","items":{"type":"string","enum":["a","b"]},"default":["b"]}`, "n"),
			"\n\n\n\n\n\n\n", accept(map[string]any{"score": 0.5, "n": 3, "on": false, "s": "hi", "color": "green", "many": []string{"b"}}),
			[]string{"[0.5] > ", "[3] > ", "[no] > ", "[hi] > ", "[green] > ", "[b] > "}},
		{"a default that does not fit is not offered", obj(`"n":{"type":"integer","minimum":5,"default":1}`),
			"\n\n", accept(map[string]any{}), []string{"\n> "}},
		{"boolean", obj(`"a":{"type":"boolean"},"b":{"type":"boolean"}`),
			"maybe\ny\nNo\n\n", accept(map[string]any{"a": true, "b": false}),
			[]string{"a (y/n)", "answer y or n; try again"}},
		{"enum by number", obj(colors), "2\n\n", accept(map[string]any{"color": "green"}),
			[]string{"  1) Red (red)\n  2) Green (green)\n  3) Blue (blue)\n", "Colour: Green (green)"}},
		{"enum by value", obj(colors), "blue\n\n", accept(map[string]any{"color": "blue"}), nil},
		{"enum by title, any case", obj(colors), "RED\n\n", accept(map[string]any{"color": "red"}), nil},
		{"enum, invalid then valid", obj(colors, "color"), "7\npurple\n\n3\n\n", accept(map[string]any{"color": "blue"}),
			[]string{`"7" is not one of the choices: type its number (1 to 3) or its value`, `"purple" is not one`, "This field is required."}},
		{"numeric enum value before number", obj(`"v":{"type":"string","enum":["3","2","1"]}`), "1\n\n", accept(map[string]any{"v": "1"}), nil},
		{"titled enum", obj(sizes), "Large\n\n", accept(map[string]any{"size": "l"}), []string{"  1) Small (s)\n  2) Large (l)\n", "  size: Large (l)\n"}},
		{"titled enum by number", obj(sizes), "1\n\n", accept(map[string]any{"size": "s"}), nil},
		{"multi-select", obj(toppings, "toppings"), "\n1,2,3\nolives, 1\n\n", accept(map[string]any{"toppings": []string{"cheese", "olives"}}),
			[]string{"choose any: numbers or values, separated by commas; 1 to 2 choices", "This field is required.", "choose 1 to 2 choices; try again", "toppings: cheese, olives"}},
		{"multi-select, titled", obj(extras), "Extra two, x1, 2\n\n", accept(map[string]any{"extras": []string{"x1", "x2"}}),
			[]string{"  1) Extra one (x1)\n  2) Extra two (x2)\n", "  extras: Extra one (x1), Extra two (x2)\n"}},
		{"empty optional field is left out", obj(`"name":{"type":"string"},"nick":{"type":"string"}`, "name"),
			"Ada\n\n\n", accept(map[string]any{"name": "Ada"}), []string{"  name: Ada\nSend?"}},
		{":skip leaves out an optional field with a default", obj(`"s":{"type":"string","default":"hi"},"t":{"type":"string"}`, "t"),
			":SKIP\n:skip\nx\n\n", accept(map[string]any{"t": "x"}), []string{"This field is required."}},
		{"edit", obj(`"name":{"type":"string"},"age":{"type":"integer"}`),
			"Ada\n36\nedit\nBob\n\nx\ny\n", accept(map[string]any{"name": "Bob", "age": 36}),
			[]string{"  name: Ada\n  age: 36\n", "[Ada] > ", "[36] > ", "  name: Bob\n  age: 36\n", "Answer with one of"}},
		{"decline keyword", obj(`"name":{"type":"string"}`), ":decline\n", &mcp.ElicitResult{Action: "decline"}, []string{"Declined."}},
		{"cancel keyword", obj(`"name":{"type":"string"},"age":{"type":"integer"}`), "Ada\n:Cancel\n", &mcp.ElicitResult{Action: "cancel"}, []string{"Cancelled."}},
		{"Ctrl-D cancels", obj(`"name":{"type":"string"},"age":{"type":"integer"}`), "Ada\n", &mcp.ElicitResult{Action: "cancel"}, nil},
		{"decline at review", obj(`"name":{"type":"string"}`), "Ada\nd\n", &mcp.ElicitResult{Action: "decline"}, nil},
		{"cancel at review", obj(`"name":{"type":"string"}`), "Ada\nc\n", &mcp.ElicitResult{Action: "cancel"}, nil},
		{"confirmation has no default answer", obj(``), "\nyes\n", accept(map[string]any{}), []string{"Accept? [y]es / [d]ecline / [c]ancel: ", "Answer with one of"}},
		{"no schema", "", "n\n", &mcp.ElicitResult{Action: "decline"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res, stderr, err := elicitScripted(t, formRequest("Tell me.", tc.schema), tc.input)
			if err != nil {
				t.Fatalf("error %v\n%s", err, stderr)
			}
			if diff := cmp.Diff(tc.want, res); diff != "" {
				t.Errorf("result (-want +got):\n%s\n%s", diff, stderr)
			}
			rest := stderr
			for _, s := range tc.stderr {
				i := strings.Index(rest, s)
				if i < 0 {
					t.Errorf("stderr lacks %q (in order):\n%s", s, stderr)
					break
				}
				rest = rest[i+len(s):]
			}
		})
	}
}

// TestElicitFormHeader: the server and its message are shown, cleaned of
// escape sequences and invisible characters; as decoded by the SDK (a Go
// map), properties come alphabetically.
func TestElicitFormHeader(t *testing.T) {
	t.Parallel()
	req := &mcp.ElicitRequest{Params: &mcp.ElicitParams{
		Message: "\x1b[31mPlease\x1b[0m confirm\u202e\x1b]8;;http://x\x07 now\nline two\x07",
		RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{
			"beta": map[string]any{"type": "string"}, "alpha": map[string]any{"type": "string", "title": "Al\x1b[2Jpha"}},
		},
	}}
	res, stderr, err := elicitScripted(t, req, "a\nb\n\n")
	if err != nil || res.Action != "accept" {
		t.Fatalf("%v %v\n%s", res, err, stderr)
	}
	for _, s := range []string{"demo asks for input:\n  | Please confirm now\n  | line two\n", "Your answers go to demo: never type passwords"} {
		if !strings.Contains(stderr, s) {
			t.Errorf("stderr lacks %q:\n%s", s, stderr)
		}
	}
	if strings.ContainsAny(stderr, "\x1b\x07\u202e") {
		t.Errorf("control characters reach the terminal: %q", stderr)
	}
	if a, b := strings.Index(stderr, "Alpha ("), strings.Index(stderr, "beta ("); a < 0 || b < a {
		t.Errorf("alpha is not asked first:\n%s", stderr)
	}
	if diff := cmp.Diff(map[string]any{"alpha": "a", "beta": "b"}, res.Content); diff != "" {
		t.Error(diff)
	}
}

func TestElicitUnsupported(t *testing.T) {
	t.Parallel()
	for _, req := range []*mcp.ElicitRequest{
		formRequest("", `{"type":"object","properties":{"x":{"type":"object"}}}`),
		formRequest("", `{"type":"object","properties":{"x":{"type":"string","format":"ipv4"}}}`),
		{Params: &mcp.ElicitParams{Mode: "telepathy"}},
		{Params: &mcp.ElicitParams{Mode: "url", URL: "http://evil.example/"}},
		{Params: &mcp.ElicitParams{Mode: "url", URL: "https://exаmple.com/"}}, // Cyrillic a
	} {
		res, stderr, err := elicitScripted(t, req, "y\n")
		var je *jsonrpc.Error
		if !errors.As(err, &je) || je.Code != jsonrpc.CodeInvalidParams || res != nil {
			t.Errorf("%+v: %v %v", req.Params, res, err)
		}
		if stderr != "" {
			t.Errorf("%+v: prompted:\n%s", req.Params, stderr)
		}
	}
}

func TestElicitURL(t *testing.T) {
	t.Parallel()
	const u = "https://calendar.example.com/consent?state=abc"
	for _, tc := range []struct {
		name, input string
		openErr     error
		want        string
		opened      bool
		stderr      string
	}{
		{"yes", "y\n", nil, "accept", true, "Opened; continue in your browser."},
		{"yes, no browser", "yes\n", errors.New("no opener"), "accept", true, "Could not open a browser (no opener); open the URL yourself."},
		{"default no", "\n", nil, "decline", false, "Declined."},
		{"no", "n\n", nil, "decline", false, "Declined."},
		{"cancel", ":cancel\n", nil, "cancel", false, "Cancelled."},
		{"Ctrl-D", "", nil, "cancel", false, "Cancelled."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var stderr strings.Builder
			var opened []string
			a := &app{stdin: strings.NewReader(tc.input), stderr: &stderr, openURL: func(s string) error {
				opened = append(opened, s)
				return tc.openErr
			}}
			res, err := a.elicitOnTerminal(context.Background(), "cal", &mcp.ElicitRequest{Params: &mcp.ElicitParams{
				Mode: "url", Message: "Connect your calendar.", URL: u, ElicitationID: "e1"}})
			if err != nil || res.Action != tc.want || res.Content != nil {
				t.Fatalf("%+v %v, want %s\n%s", res, err, tc.want, stderr.String())
			}
			if want := []string(nil); tc.opened {
				want = []string{u}
				if diff := cmp.Diff(want, opened); diff != "" {
					t.Error(diff)
				}
			} else if opened != nil {
				t.Errorf("opened %q without consent", opened)
			}
			want := "\ncal asks you to open a web page:\n  | Connect your calendar.\n  URL:  " + u +
				"\n  Site: calendar.example.com\nOpen it in your browser? [y/N] (:cancel or Ctrl-D dismisses) "
			if got := stderr.String(); !strings.HasPrefix(got, want) || !strings.Contains(got, tc.stderr) {
				t.Errorf("stderr:\n%s\nwant it to start with:\n%s\nand contain %q", got, want, tc.stderr)
			}
		})
	}
}

// syncBuffer is a stderr written by a prompt in another goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// waitFor waits until stderr shows s n times.
func waitFor(t *testing.T, stderr *syncBuffer, s string, n int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); strings.Count(stderr.String(), s) < n; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no %q on stderr:\n%s", s, stderr.String())
		}
	}
}

var (
	testTool     = &registry.Tool{Name: "mcp__gh__push", DisplayName: "Push"}
	testDecision = permissions.Decision{Behavior: permissions.Ask}
)

// recv receives from ch, failing the test if nothing comes.
func recv[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatal("no answer: a prompt is stuck")
		panic("unreachable")
	}
}

type outcome struct {
	res *mcp.ElicitResult
	err error
}

// TestElicitContextEnds: a prompt gives up as soon as its context ends; the
// read it leaves takes no line away from the next prompt, and a line typed
// for it before the next prompt shows is not taken as that prompt's answer.
func TestElicitContextEnds(t *testing.T) {
	t.Parallel()
	pr, pw := io.Pipe()
	defer pw.Close()
	stderr := &syncBuffer{}
	a := &app{stdin: pr, stderr: stderr}
	req := formRequest("", `{"type":"object","properties":{"name":{"type":"string"}}}`)

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan outcome, 1)
	go func() {
		res, err := a.elicitOnTerminal(ctx, "demo", req)
		done <- outcome{res, err}
	}()
	waitFor(t, stderr, "> ", 1)

	// Meanwhile, another request waits for its turn, and gives up.
	short, cancelShort := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancelShort()
	if res, err := a.elicitOnTerminal(short, "other", req); !errors.Is(err, context.DeadlineExceeded) || res != nil {
		t.Fatalf("waiting for the turn: %v %v", res, err)
	}
	if strings.Contains(stderr.String(), "other asks") {
		t.Errorf("the waiting request printed:\n%s", stderr.String())
	}

	cancel()
	select {
	case o := <-done:
		if !errors.Is(o.err, context.Canceled) || o.res != nil {
			t.Fatalf("cancelled prompt: %v %v", o.res, o.err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the prompt did not give up when its context ended")
	}
	waitFor(t, stderr, "(no longer waiting for an answer: context canceled)", 1)

	// A line typed now was meant for the prompt that gave up: the
	// abandoned read takes it (the write returns once it is read), and
	// the next prompt drops it.
	if _, err := pw.Write([]byte("y\n")); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); len(a.pendingRead) == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the abandoned read did not complete")
		}
	}
	asked := make(chan bool, 1)
	go func() {
		ok, _ := a.askOnTerminal(context.Background(), testTool, testDecision)
		asked <- ok
	}()
	waitFor(t, stderr, "Allow?", 1)
	go io.WriteString(pw, "n\n") // blocks until read: never, if the prompt took "y"
	if recv(t, asked) {
		t.Fatal("the line typed for the cancelled prompt answered the next one")
	}

	// With no read left over, the next prompt gets what is typed for it.
	go func() {
		res, err := a.elicitOnTerminal(context.Background(), "demo", req)
		done <- outcome{res, err}
	}()
	waitFor(t, stderr, "> ", 2)
	go io.WriteString(pw, "Ada\n")
	waitFor(t, stderr, "Send?", 1)
	go io.WriteString(pw, "y\n")
	o := recv(t, done)
	if o.err != nil || o.res.Action != "accept" || o.res.Content["name"] != "Ada" {
		t.Fatalf("%+v %v\n%s", o.res, o.err, stderr.String())
	}
}

// TestElicitAbandonedReadServesNextPrompt: a line typed after the next
// prompt shows completes the read the cancelled prompt left, and answers
// the new prompt.
func TestElicitAbandonedReadServesNextPrompt(t *testing.T) {
	t.Parallel()
	pr, pw := io.Pipe()
	defer pw.Close()
	stderr := &syncBuffer{}
	a := &app{stdin: pr, stderr: stderr}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		waitFor(t, stderr, "Allow?", 1)
		cancel()
	}()
	if ok, err := a.askOnTerminal(ctx, testTool, testDecision); ok || !errors.Is(err, context.Canceled) {
		t.Fatalf("%v %v", ok, err)
	}
	asked := make(chan bool, 1)
	go func() {
		ok, _ := a.askOnTerminal(context.Background(), testTool, testDecision)
		asked <- ok
	}()
	waitFor(t, stderr, "Allow?", 2)
	go io.WriteString(pw, "y\n")
	if !recv(t, asked) {
		t.Fatal("the answer was lost")
	}
}

// TestElicitThroughSDK: an answer passes the go-sdk's check against the
// requested schema (integers as int, multi-select as []string) and reaches
// the server as typed. The SDK hands the schema over as a Go map: fields
// come alphabetically.
func TestElicitThroughSDK(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	schema := json.RawMessage(`{"type":"object","properties":{
		"n":{"type":"integer","minimum":1},"x":{"type":"number"},"ok":{"type":"boolean","default":true},
		"pick":{"type":"string","oneOf":[{"const":"a","title":"A"},{"const":"b","title":"B"}]},
		"many":{"type":"array","items":{"anyOf":[{"const":"p","title":"P"},{"const":"q","title":"Q"}]},"maxItems":2},
		"when":{"type":"string","format":"date"}},"required":["n","ok"]}`)
	s := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "v0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "ask"}, func(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		if len(req.Params.InputResponses) == 0 {
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"f": &mcp.ElicitParams{Message: "Fill in.", RequestedSchema: schema}}}, nil, nil
		}
		b, _ := json.Marshal(req.Params.InputResponses["f"])
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}, nil, nil
	})
	ct, st := mcp.NewInMemoryTransports()
	ss, err := s.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	var stderr strings.Builder
	a := &app{stdin: strings.NewReader("q,p\n7\n\nB\n2025-01-31\n2.5\n\n"), stderr: &stderr}
	c := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "v0"}, &mcp.ClientOptions{
		ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return a.elicitOnTerminal(ctx, "s", req)
		},
	})
	cs, err := c.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "ask"})
	if err != nil || res.IsError {
		t.Fatalf("%v %+v\n%s", err, res, stderr.String())
	}
	want := `{"action":"accept","content":{"many":["p","q"],"n":7,"ok":true,"pick":"b","when":"2025-01-31","x":2.5}}`
	if got := res.Content[0].(*mcp.TextContent).Text; got != want {
		t.Errorf("the server got\n%s\nwant\n%s\n%s", got, want, stderr.String())
	}
}

func TestDeclineSampling(t *testing.T) {
	t.Parallel()
	var stderr strings.Builder
	a := &app{stderr: &stderr}
	res, err := a.declineSampling(context.Background(), "summarizer", &mcp.CreateMessageParams{})
	var je *jsonrpc.Error
	if res != nil || !errors.As(err, &je) || je.Code != -1 {
		t.Fatalf("%v %v", res, err)
	}
	for _, s := range []string{"mcphost's CLI does not sample", "server summarizer asked", "sampling/createMessage", "use mcphost serve behind an MCP client that supports sampling"} {
		if !strings.Contains(je.Message, s) {
			t.Errorf("message lacks %q: %s", s, je.Message)
		}
	}
	if !strings.Contains(stderr.String(), "warning: summarizer asked for an LLM completion") {
		t.Errorf("stderr: %q", stderr.String())
	}
}
