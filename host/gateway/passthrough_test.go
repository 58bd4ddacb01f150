package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host"
	hauth "github.com/mcphost/mcphost/host/auth"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/gateway"
	"github.com/mcphost/mcphost/host/gateway/streamable"
	"github.com/mcphost/mcphost/host/permissions"
	"github.com/mcphost/mcphost/host/registry"
	"github.com/mcphost/mcphost/internal/demoserver"
)

// The gateway's pass-through, end to end: real demo server processes
// (stdio) behind one gateway served over streamable HTTP on loopback (the
// one endpoint of serve --http, serving both eras), and go-sdk clients of
// both protocol eras downstream.

const (
	oldProtocol = "2025-11-25" // sessions; server requests during a call
	newProtocol = "2026-07-28" // input-required results; per-request _meta
)

var protocols = []string{oldProtocol, newProtocol}

// ptGateway is a gateway over servers served on a loopback HTTP server.
type ptGateway struct {
	g        *gateway.Gateway
	f        *streamable.Front
	h        *host.Host
	url      string             // serve --http: both eras
	problems []registry.Problem // of the first Sync
}

type ptOptions struct {
	servers []*config.Server
	naming  string
	rules   []config.PermissionRule
	http    *streamable.Options
	gopts   *gateway.Options // Keys and State (Naming is the naming above)
	tokens  hauth.Store      // the host's token store (nil: in memory)
}

func ptServe(t *testing.T, o ptOptions) *ptGateway {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	h, err := host.New(&config.Config{Servers: o.servers, Permissions: o.rules, DefaultMode: "allow_all"}, &host.Options{OutputDir: t.TempDir(), TokenStore: o.tokens,
		// As `mcphost serve` offers servers of versions before 2026-07-28.
		ClientCapabilities: &mcp.ClientCapabilities{
			Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}, URL: &mcp.URLElicitationCapabilities{}},
			Sampling:    &mcp.SamplingCapabilities{},
			RootsV2:     &mcp.RootCapabilities{},
			Extensions:  gateway.ClientExtensions(),
		}})
	if err != nil {
		t.Fatal(err)
	}
	h.ConnectAll(ctx, nil)
	var gopts gateway.Options
	if o.gopts != nil {
		gopts = *o.gopts
	}
	gopts.Naming = o.naming
	g := gateway.New(h, &gopts)
	t.Cleanup(func() { g.Close() })
	problems := g.Sync(ctx)
	f := streamable.New(g)
	srv := httptest.NewServer(f.Handler(o.http))
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
		cancel()
		h.Close()
	})
	return &ptGateway{g: g, f: f, h: h, url: srv.URL, problems: problems}
}

// twoServers is the gateway of the pass-through tests: demo servers a and b
// with the pass-through features, prefixed names.
func twoServers(t *testing.T) *ptGateway {
	return ptServe(t, ptOptions{servers: []*config.Server{demo("a", "-passthrough"), demo("b", "-passthrough")}})
}

// twoServersFirstSession is twoServers with legacy_session = false: the
// tests of what a tool call does to the server's state that its first
// session sees (subscriptions, stats, a crash). By default a 2025-11-25
// client's calls go to a second session (for a stdio server, a second
// process), whose state the first session's subscribers never see.
func twoServersFirstSession(t *testing.T) *ptGateway {
	return ptServe(t, ptOptions{servers: []*config.Server{withoutLegacy(demo("a", "-passthrough")), withoutLegacy(demo("b", "-passthrough"))}})
}

// dial connects a go-sdk client speaking version to the gateway.
func (p *ptGateway) dial(t *testing.T, version string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	url := p.url
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "pt-" + version}, opts).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	if got := cs.InitializeResult().ProtocolVersion; got != version {
		t.Fatalf("negotiated protocol %s, want %s", got, version)
	}
	return cs
}

func collect[T any](t *testing.T, seq func(func(T, error) bool), name func(T) string) []string {
	t.Helper()
	var out []string
	for it, err := range seq {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, name(it))
	}
	sort.Strings(out)
	return out
}

func resourceURIs(t *testing.T, cs *mcp.ClientSession) []string {
	return collect(t, cs.Resources(context.Background(), nil), func(r *mcp.Resource) string { return r.URI })
}

func templateURIs(t *testing.T, cs *mcp.ClientSession) []string {
	return collect(t, cs.ResourceTemplates(context.Background(), nil), func(r *mcp.ResourceTemplate) string { return r.URITemplate })
}

func promptNames(t *testing.T, cs *mcp.ClientSession) []string {
	return collect(t, cs.Prompts(context.Background(), nil), func(p *mcp.Prompt) string { return p.Name })
}

func readText(t *testing.T, cs *mcp.ClientSession, uri string) string {
	t.Helper()
	res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		t.Fatalf("read %s: %v", uri, err)
	}
	if len(res.Contents) != 1 {
		t.Fatalf("read %s: %d contents", uri, len(res.Contents))
	}
	return res.Contents[0].Text
}

// TestPassthroughFeatures: resources (shared URIs qualified per server, each
// read going to its owner, text and blob), resource templates, prompts and
// completions of two servers, for a client of each protocol era.
func TestPassthroughFeatures(t *testing.T) {
	t.Parallel()
	p := twoServers(t)
	if len(p.problems) > 0 {
		t.Fatal(p.problems)
	}
	ctx := context.Background()
	for _, version := range protocols {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			cs := p.dial(t, version, nil)
			var wantURIs []string
			for _, s := range []string{"a", "b"} {
				for _, u := range []string{"demo://pixel.png", "demo://readme", "demo://whoami"} {
					wantURIs = append(wantURIs, "mcphost://"+s+"/"+u)
				}
			}
			sort.Strings(wantURIs)
			if diff := cmp.Diff(wantURIs, resourceURIs(t, cs)); diff != "" {
				t.Errorf("resources/list (-want +got):\n%s", diff)
			}
			want := []string{"mcphost://a/demo://items/{item}", "mcphost://b/demo://items/{item}"}
			if diff := cmp.Diff(want, templateURIs(t, cs)); diff != "" {
				t.Errorf("resources/templates/list (-want +got):\n%s", diff)
			}
			want = []string{"mcp__a__greet", "mcp__a__introduce", "mcp__b__greet", "mcp__b__introduce"}
			if diff := cmp.Diff(want, promptNames(t, cs)); diff != "" {
				t.Errorf("prompts/list (-want +got):\n%s", diff)
			}

			for _, tc := range []struct{ uri, want string }{
				{"mcphost://a/demo://whoami", "I am a."},
				{"mcphost://b/demo://whoami", "I am b."},
				{"mcphost://b/demo://readme", "This is the mcphost demo server."},
				{"mcphost://a/demo://items/apple", "item apple of a"},
				{"mcphost://b/demo://items/banana", "item banana of b"},
			} {
				if got := readText(t, cs, tc.uri); got != tc.want {
					t.Errorf("read %s = %q, want %q", tc.uri, got, tc.want)
				}
			}
			res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "mcphost://b/demo://pixel.png"})
			if err != nil || len(res.Contents) != 1 || len(res.Contents[0].Blob) != 67 || res.Contents[0].MIMEType != "image/png" {
				t.Errorf("read the blob: %+v %v", res, err)
			}
			if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "demo://whoami"}); err == nil {
				t.Error("the unqualified form of a shared URI was read")
			}

			for _, tc := range []struct {
				prompt string
				want   string
			}{
				{"mcp__a__introduce", "Introduce Ada to a."},
				{"mcp__b__introduce", "Introduce Ada to b."},
				{"mcp__b__greet", "Say hello to Ada."},
			} {
				arg := "who"
				if strings.HasSuffix(tc.prompt, "greet") {
					arg = "name"
				}
				res, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: tc.prompt, Arguments: map[string]string{arg: "Ada"}})
				if err != nil || len(res.Messages) != 1 || host.TextOf([]mcp.Content{res.Messages[0].Content}) != tc.want {
					t.Errorf("prompts/get %s: %+v %v; want %q", tc.prompt, res, err, tc.want)
				}
			}

			for _, tc := range []struct {
				name string
				ref  *mcp.CompleteReference
				arg  mcp.CompleteParamsArgument
				want []string
			}{
				{"prompt argument of a", &mcp.CompleteReference{Type: "ref/prompt", Name: "mcp__a__introduce"}, mcp.CompleteParamsArgument{Name: "who", Value: "A"}, []string{"Ada@a", "Alan@a"}},
				{"prompt argument of b", &mcp.CompleteReference{Type: "ref/prompt", Name: "mcp__b__introduce"}, mcp.CompleteParamsArgument{Name: "who", Value: "G"}, []string{"Grace@b"}},
				{"template variable of a", &mcp.CompleteReference{Type: "ref/resource", URI: "mcphost://a/demo://items/{item}"}, mcp.CompleteParamsArgument{Name: "item", Value: "b"}, []string{"banana@a"}},
				{"template variable of b", &mcp.CompleteReference{Type: "ref/resource", URI: "mcphost://b/demo://items/{item}"}, mcp.CompleteParamsArgument{Name: "item", Value: "ap"}, []string{"apple@b", "apricot@b"}},
			} {
				res, err := cs.Complete(ctx, &mcp.CompleteParams{Ref: tc.ref, Argument: tc.arg})
				if err != nil {
					t.Errorf("complete %s: %v", tc.name, err)
					continue
				}
				if diff := cmp.Diff(tc.want, res.Completion.Values); diff != "" {
					t.Errorf("complete %s (-want +got):\n%s", tc.name, diff)
				}
			}
			_, err = cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "introduce"}, Argument: mcp.CompleteParamsArgument{Name: "who", Value: "A"}})
			if err == nil {
				t.Error("a completion of a prompt name that is not served was answered")
			}
		})
	}
}

// TestPassthroughSubscribe: a client subscribed to a server's resource (a
// listed one, or one of a template, both shared by the two servers and so
// qualified) gets notifications/resources/updated under the URI it
// subscribed to when the server reports the resource updated; the other
// server's resource of the same original URI, and a client that did not
// subscribe, get nothing. After the unsubscribe, nothing arrives.
func TestPassthroughSubscribe(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, version := range protocols {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			p := twoServersFirstSession(t) // its own: updates reach every subscriber of the gateway
			updates := func(ch chan string) *mcp.ClientOptions {
				return &mcp.ClientOptions{ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) {
					ch <- r.Params.URI
				}}
			}
			subscribed, other := make(chan string, 100), make(chan string, 100)
			sub := p.dial(t, version, updates(subscribed))
			unsub := p.dial(t, version, updates(other))
			touch := func(server, uri string) {
				t.Helper()
				res, err := unsub.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__" + server + "__touch", Arguments: map[string]any{"uri": uri}})
				if err != nil || res.IsError {
					t.Fatalf("touch: %v %s", err, textOf(res))
				}
			}
			// quiet fails on any update that arrives within a while.
			quiet := func(ch chan string, what string) {
				t.Helper()
				select {
				case got := <-ch:
					t.Errorf("%s: an update of %q arrived", what, got)
				case <-time.After(300 * time.Millisecond):
				}
			}
			for _, tc := range []struct {
				name, served, server, orig, otherServer string
			}{
				{"listed resource", "mcphost://a/demo://whoami", "a", "demo://whoami", "b"},
				{"template resource", "mcphost://b/demo://items/apple", "b", "demo://items/apple", "a"},
			} {
				t.Run(tc.name, func(t *testing.T) {
					if err := sub.Subscribe(ctx, &mcp.SubscribeParams{URI: tc.served}); err != nil {
						t.Fatal(err)
					}
					// Under 2026-07-28 the subscription is a
					// subscriptions/listen stream that Subscribe does not
					// wait for: touch until the first update arrives.
					deadline := time.After(5 * time.Second)
				wait:
					for {
						touch(tc.server, tc.orig)
						select {
						case got := <-subscribed:
							if got != tc.served {
								t.Fatalf("update of %q, want %q", got, tc.served)
							}
							break wait
						case <-time.After(200 * time.Millisecond):
						case <-deadline:
							t.Fatalf("the subscribed client got no notifications/resources/updated of %s", tc.served)
						}
					}
					quiet(subscribed, "after the first update") // late answers to the retries
					for len(subscribed) > 0 {
						<-subscribed
					}
					touch(tc.otherServer, tc.orig)
					quiet(subscribed, "the other server's resource of the same URI was touched")
					quiet(other, "a client that did not subscribe")
					if err := sub.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: tc.served}); err != nil {
						t.Fatal(err)
					}
					time.Sleep(200 * time.Millisecond) // a 2026-07-28 listen ends asynchronously
					touch(tc.server, tc.orig)
					quiet(subscribed, "after the unsubscribe")
				})
			}
		})
	}
}

// TestPassthroughListChangedAfterUnsubscribe: once a resource subscription
// ends, the server's tools/list_changed still reaches the gateway.
//
// KNOWN BUG (go-sdk v1.8.0, not mcphost): upstream, a 2026-07-28
// subscription is a subscriptions/listen request of its own; when it ends
// (the unsubscribe), the server's Server.subscriptionsListen (mcp/server.go,
// the deferred deletes after "if allowed.ResourcesListChanged") deletes the
// session's tools, prompts and resources list_changed subscriptions too,
// though another listen made them. The server then never again tells the
// host of a list change on that session. Set MCPHOST_TEST_KNOWN_BUGS=1 to run.
func TestPassthroughListChangedAfterUnsubscribe(t *testing.T) {
	if os.Getenv("MCPHOST_TEST_KNOWN_BUGS") == "" {
		t.Skip("go-sdk v1.8.0: the end of a subscriptions/listen ends the session's list_changed subscriptions (set MCPHOST_TEST_KNOWN_BUGS=1 to run)")
	}
	t.Parallel()
	p := twoServers(t)
	ctx := context.Background()
	cs := p.dial(t, oldProtocol, nil)
	listed := func(name string) bool {
		t.Helper()
		if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__a__add_tool", Arguments: map[string]any{"name": name}}); err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			if slices.Contains(toolNames(t, cs), "mcp__a__"+name) {
				return true
			}
		}
		return false
	}
	const uri = "mcphost://a/demo://whoami"
	if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
		t.Fatal(err)
	}
	if !listed("while_subscribed") {
		t.Fatal("a tool added while subscribed is not listed")
	}
	if err := cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: uri}); err != nil {
		t.Fatal(err)
	}
	if !listed("after_unsubscribe") {
		t.Error("a tool added after the unsubscribe is not listed: the server's list_changed no longer reaches the gateway")
	}
}

// TestPassthroughLogging: a client that set a log level gets the messages
// an upstream server logs during its call, tagged with the server, at that
// level and above; another client (same level) does not get them. Under
// 2026-07-28 the level is the request's _meta logLevel. The log tool returns
// right after logging, so the message arrives just before the result: it
// must still reach its caller, before the result.
func TestPassthroughLogging(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, version := range protocols {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			p := twoServers(t) // its own: a message whose call is not known goes to every session
			logs := func(ch chan *mcp.LoggingMessageParams) *mcp.ClientOptions {
				return &mcp.ClientOptions{LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
					ch <- r.Params
				}}
			}
			msgs, others := make(chan *mcp.LoggingMessageParams, 10), make(chan *mcp.LoggingMessageParams, 10)
			cs := p.dial(t, version, logs(msgs))
			other := p.dial(t, version, logs(others))
			var meta mcp.Meta
			if version == oldProtocol {
				for _, c := range []*mcp.ClientSession{cs, other} {
					if err := c.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
						t.Fatal(err)
					}
				}
			} else {
				meta = mcp.Meta{mcp.MetaKeyLogLevel: "info"}
			}
			for _, tc := range []struct {
				tool, level, logger, message string
				wantLogger                   string // "": none arrives
			}{
				{"mcp__b__log", "debug", "", "below the level", ""},
				{"mcp__a__log", "warning", "db", "from a " + version, "a/db"},
				{"mcp__b__log", "info", "", "from b " + version, "b"},
			} {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Meta: meta, Name: tc.tool, Arguments: map[string]any{
					"level": tc.level, "logger": tc.logger, "message": tc.message}})
				if err != nil || res.IsError {
					t.Fatalf("%s: %v %s", tc.tool, err, textOf(res))
				}
				if tc.wantLogger == "" {
					continue
				}
				select {
				case m := <-msgs:
					if m.Logger != tc.wantLogger || m.Data != tc.message || string(m.Level) != tc.level {
						t.Errorf("message %+v, want logger %q data %q level %s", m, tc.wantLogger, tc.message, tc.level)
					}
				case <-time.After(5 * time.Second):
					t.Fatalf("%s: no notifications/message", tc.tool)
				}
			}
			select {
			case m := <-others:
				t.Errorf("another client got the message %+v", m)
			default:
			}
		})
	}
}

// TestPassthroughConcurrentElicitations: two clients call the ask tool of
// the same server at the same time; each answers its own call's question
// (the answers are held until both were asked, so the calls overlap), and
// each result carries its own client's answer.
func TestPassthroughConcurrentElicitations(t *testing.T) {
	t.Parallel()
	p := twoServers(t)
	for _, version := range protocols {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			var asked sync.WaitGroup
			asked.Add(2)
			bothAsked := make(chan struct{})
			go func() { asked.Wait(); close(bothAsked) }()
			users := []string{"alice", "bob"}
			sessions := make([]*mcp.ClientSession, len(users))
			for i, user := range users {
				var once sync.Once
				sessions[i] = p.dial(t, version, &mcp.ClientOptions{ElicitationHandler: func(ctx context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					if !strings.Contains(r.Params.Message, "question for "+user) {
						return nil, fmt.Errorf("%s was asked %q", user, r.Params.Message)
					}
					once.Do(asked.Done)
					select {
					case <-bothAsked:
					case <-ctx.Done():
						return nil, ctx.Err()
					}
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": user}}, nil
				}})
			}
			results := make([]string, len(users))
			errs := make([]error, len(users))
			var wg sync.WaitGroup
			for i, user := range users {
				wg.Add(1)
				go func() {
					defer wg.Done()
					res, err := sessions[i].CallTool(ctx, &mcp.CallToolParams{Name: "mcp__a__ask", Arguments: map[string]any{"question": "question for " + user}})
					if err == nil && res.IsError {
						err = fmt.Errorf("isError: %s", host.TextOf(res.Content))
					}
					if err == nil {
						results[i] = host.TextOf(res.Content)
					}
					errs[i] = err
				}()
			}
			wg.Wait()
			for i, user := range users {
				if errs[i] != nil {
					t.Errorf("%s's call: %v", user, errs[i])
				} else if results[i] != "answer: "+user {
					t.Errorf("%s's call returned %q", user, results[i])
				}
			}
		})
	}
}

// TestPassthroughNaming: the names tools and prompts are served under, per
// naming mode, that a call by the served name works, and that permission
// rules keep using the canonical names.
func TestPassthroughNaming(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	defsB := filepath.Join(dir, "b.json")
	b, _ := json.Marshal(demoserver.Definitions{ExtraTools: []string{"only_b"}})
	if err := os.WriteFile(defsB, b, 0o600); err != nil {
		t.Fatal(err)
	}
	denyEcho := config.PermissionRule{Behavior: permissions.Deny, Pattern: "mcp__a__echo", Origin: config.Origin{Scope: config.ScopeUser, File: "u.hcl"}}
	defsM := filepath.Join(dir, "m.json")
	b, _ = json.Marshal(demoserver.Definitions{ExtraTools: []string{"b__only_b"}})
	if err := os.WriteFile(defsM, b, 0o600); err != nil {
		t.Fatal(err)
	}
	one := func() []*config.Server { return []*config.Server{demo("a")} }
	two := func() []*config.Server { return []*config.Server{demo("a"), demo("b", "-definitions", defsB)} }
	// Server "mcp"'s tool "b__only_b" is mcp__mcp__b__only_b: under server
	// naming it would be served as mcp__b__only_b, b's only_b's registry name.
	ambiguous := func() []*config.Server {
		return []*config.Server{demo("mcp", "-definitions", defsM), demo("b", "-definitions", defsB)}
	}
	for _, tc := range []struct {
		name        string
		naming      string
		servers     func() []*config.Server
		rules       []config.PermissionRule
		wantTools   []string // among the tools served (a subset check) ...
		noTools     []string // ... and names that must not be served
		wantPrompts []string // all prompts served
		wantProblem string   // in the gateway's Sync problems
		call        string   // a call by the served name that must work
		denied      string   // a call that a rule on the canonical name denies
	}{
		{name: "prefixed", naming: config.NamingPrefixed, servers: two,
			wantTools: []string{"mcp__a__echo", "mcp__b__echo", "mcp__b__only_b"}, noTools: []string{"echo", "only_b"},
			wantPrompts: []string{"mcp__a__greet", "mcp__b__greet"}, call: "mcp__b__echo"},
		{name: "conditional, one server", naming: config.NamingConditional, servers: one, rules: []config.PermissionRule{denyEcho},
			wantTools: []string{"add", "echo"}, noTools: []string{"mcp__a__echo"},
			wantPrompts: []string{"greet"}, call: "add", denied: "echo"},
		{name: "conditional, two servers", naming: config.NamingConditional, servers: two,
			wantTools: []string{"mcp__a__echo", "mcp__b__only_b"}, noTools: []string{"echo", "only_b"},
			wantPrompts: []string{"mcp__a__greet", "mcp__b__greet"}, call: "mcp__a__echo"},
		{name: "bare, one server", naming: config.NamingBare, servers: one, rules: []config.PermissionRule{denyEcho},
			wantTools: []string{"echo"}, noTools: []string{"mcp__a__echo"},
			wantPrompts: []string{"greet"}, call: "add", denied: "echo"},
		{name: "bare, collisions", naming: config.NamingBare, servers: two, rules: []config.PermissionRule{denyEcho},
			wantTools: []string{"only_b"}, noTools: []string{"echo", "add", "mcp__a__echo", "mcp__b__echo"},
			wantPrompts: nil, wantProblem: `the tool "echo" is offered by servers a, b`, call: "only_b"},
		{name: "server, one server", naming: config.NamingServer, servers: one, rules: []config.PermissionRule{denyEcho},
			wantTools: []string{"a__add", "a__echo"}, noTools: []string{"echo", "add", "mcp__a__echo"},
			wantPrompts: []string{"a__greet"}, call: "a__add", denied: "a__echo"},
		{name: "server, two servers", naming: config.NamingServer, servers: two, rules: []config.PermissionRule{denyEcho},
			wantTools: []string{"a__echo", "b__echo", "b__only_b"}, noTools: []string{"echo", "only_b", "mcp__a__echo", "mcp__b__echo"},
			wantPrompts: []string{"a__greet", "b__greet"}, call: "b__echo", denied: "a__echo"},
		{name: "server, a served name that reads as a registry name", naming: config.NamingServer, servers: ambiguous,
			wantTools: []string{"mcp__echo", "b__echo", "b__only_b"}, noTools: []string{"mcp__b__only_b", "mcp__mcp__b__only_b"},
			wantPrompts: []string{"b__greet", "mcp__greet"}, call: "b__only_b",
			wantProblem: `the tool "b__only_b" is not served under "mcp__b__only_b", which reads as a registry name`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := ptServe(t, ptOptions{servers: tc.servers(), naming: tc.naming, rules: tc.rules})
			var details []string
			for _, pr := range p.problems {
				details = append(details, pr.Server+": "+pr.Detail)
			}
			all := strings.Join(details, "\n")
			if tc.wantProblem == "" && len(details) > 0 {
				t.Errorf("problems:\n%s", all)
			}
			if tc.wantProblem != "" && !strings.Contains(all, tc.wantProblem) {
				t.Errorf("problems:\n%s\nwant one containing %q", all, tc.wantProblem)
			}
			if tc.naming == config.NamingBare && tc.wantProblem != "" && !strings.Contains(all, `the prompt "greet" is offered by servers a, b`) {
				t.Errorf("problems:\n%s\nwant the prompt collision too", all)
			}
			cs := p.dial(t, newProtocol, nil)
			if tc.naming == config.NamingServer {
				if ir := cs.InitializeResult(); ir == nil || !strings.Contains(ir.Instructions, "named SERVER__NAME.") {
					t.Errorf("instructions do not say the names are SERVER__NAME: %+v", ir)
				}
			}
			tools := toolNames(t, cs)
			for _, n := range tc.wantTools {
				if !slices.Contains(tools, n) {
					t.Errorf("tool %s not served; tools: %v", n, tools)
				}
			}
			for _, n := range tc.noTools {
				if slices.Contains(tools, n) {
					t.Errorf("tool %s served; tools: %v", n, tools)
				}
			}
			if diff := cmp.Diff(tc.wantPrompts, promptNames(t, cs)); diff != "" {
				t.Errorf("prompts (-want +got):\n%s", diff)
			}
			ctx := context.Background()
			args := func(tool string) map[string]any {
				if strings.HasSuffix(tool, "add") {
					return map[string]any{"a": 1, "b": 2}
				}
				return map[string]any{"message": "named"}
			}
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tc.call, Arguments: args(tc.call)})
			if err != nil || res.IsError {
				t.Errorf("call %s: %+v %v %s", tc.call, res, err, textOf(res))
			}
			if len(tc.wantPrompts) > 0 {
				pr, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: tc.wantPrompts[0], Arguments: map[string]string{"name": "Ada"}})
				if err != nil || host.TextOf([]mcp.Content{pr.Messages[0].Content}) != "Say hello to Ada." {
					t.Errorf("prompts/get %s: %+v %v", tc.wantPrompts[0], pr, err)
				}
			}
			if tc.denied != "" {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tc.denied, Arguments: args(tc.denied)})
				if err != nil || !res.IsError || !strings.Contains(host.TextOf(res.Content), `permission denied: mcp__a__echo is deny by rule "mcp__a__echo"`) {
					t.Errorf("call %s under a deny rule of its canonical name: %v %s", tc.denied, err, textOf(res))
				}
			}
			if tc.naming == config.NamingBare && tc.wantProblem != "" {
				if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: args("echo")}); err == nil {
					t.Error("a colliding bare name was called")
				}
			}
			if tc.naming == config.NamingServer {
				// A registry name is not a served name under server naming:
				// the call is refused as of an unknown tool, whichever tool
				// the name would mean.
				for _, n := range []string{"mcp__b__echo", "mcp__b__only_b"} {
					if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: n, Arguments: args(n)}); err == nil && !res.IsError {
						t.Errorf("call %s under server naming: %s", n, textOf(res))
					}
				}
			}
		})
	}
}

// TestPassthroughOrigin: a browser request from the gateway's own origin is
// served; one from another site is refused.
func TestPassthroughOrigin(t *testing.T) {
	t.Parallel()
	_, url := gatewayServer(t, nil, nil)
	hostPort := strings.TrimPrefix(url, "http://")
	_, port, _ := strings.Cut(hostPort, ":")
	for _, tc := range []struct {
		name, host, origin string
		want               int
	}{
		{"own origin", "", "http://" + hostPort, http.StatusOK},
		{"own origin, case-insensitive", "", "HTTP://" + hostPort, http.StatusOK},
		{"own origin by the name used", "localhost:" + port, "http://localhost:" + port, http.StatusOK},
		{"another port", "", "http://127.0.0.1:1", http.StatusForbidden},
		{"localhost for 127.0.0.1", "", "http://localhost:" + port, http.StatusForbidden},
		{"https for http", "", "https://" + hostPort, http.StatusForbidden},
		{"another site", "", "http://evil.example", http.StatusForbidden},
		{"null", "", "null", http.StatusForbidden},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(initialize))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Origin", tc.origin)
			if tc.host != "" {
				req.Host = tc.host
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Errorf("status %d, want %d", resp.StatusCode, tc.want)
			}
			if resp.Header.Get("Access-Control-Allow-Origin") != "" {
				t.Errorf("CORS header sent: %q", resp.Header.Get("Access-Control-Allow-Origin"))
			}
		})
	}
}

// TestPassthroughRelistOnReconnect: a server that crashes and comes back
// offering another tool, prompt and resource: after the reconnect, clients
// are told (list_changed) and list the new ones, and the old ones are gone.
func TestPassthroughRelistOnReconnect(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	defs := filepath.Join(dir, "defs.json")
	writeDefs := func(d demoserver.Definitions) {
		b, _ := json.Marshal(d)
		if err := os.WriteFile(defs, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	writeDefs(demoserver.Definitions{ExtraTools: []string{"old_tool"}, ExtraPrompts: []string{"old_prompt"}, ExtraResources: []string{"demo://old"}})
	p := ptServe(t, ptOptions{servers: []*config.Server{withoutLegacy(demo("d", "-definitions", defs))}})
	if len(p.problems) > 0 {
		t.Fatal(p.problems)
	}
	ctx := context.Background()
	for _, version := range protocols {
		t.Run(version, func(t *testing.T) {
			// Not parallel: the subtests restart the one server in turn.
			changed := make(chan string, 30)
			note := func(kind string) { changed <- kind }
			cs := p.dial(t, version, &mcp.ClientOptions{
				ToolListChangedHandler:     func(context.Context, *mcp.ToolListChangedRequest) { note("tools") },
				PromptListChangedHandler:   func(context.Context, *mcp.PromptListChangedRequest) { note("prompts") },
				ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { note("resources") },
			})
			oldT, oldP, oldR := "old_tool", "old_prompt", "demo://old"
			newT, newP, newR := "new_tool_"+version[:4], "new_prompt_"+version[:4], "demo://new-"+version[:4]
			if version == newProtocol {
				oldT, oldP, oldR = "new_tool_"+oldProtocol[:4], "new_prompt_"+oldProtocol[:4], "demo://new-"+oldProtocol[:4]
			}
			if !slices.Contains(toolNames(t, cs), "mcp__d__"+oldT) || !slices.Contains(promptNames(t, cs), "mcp__d__"+oldP) || !slices.Contains(resourceURIs(t, cs), oldR) {
				t.Fatalf("before the restart: tools %v prompts %v resources %v", toolNames(t, cs), promptNames(t, cs), resourceURIs(t, cs))
			}
			writeDefs(demoserver.Definitions{ExtraTools: []string{newT}, ExtraPrompts: []string{newP}, ExtraResources: []string{newR}})
			if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__d__crash", Arguments: map[string]any{}}); err == nil && !res.IsError {
				t.Fatal("crash returned no error")
			}
			// A stdio server is restarted on next use: a call brings it back.
			deadline := time.Now().Add(10 * time.Second)
			for {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__d__echo", Arguments: map[string]any{"message": "back"}})
				if err == nil && !res.IsError && host.TextOf(res.Content) == "back" {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the server did not come back: %+v %v", res, err)
				}
				time.Sleep(100 * time.Millisecond)
			}
			seen := map[string]bool{}
			for !(seen["tools"] && seen["prompts"] && seen["resources"]) {
				select {
				case k := <-changed:
					seen[k] = true
				case <-time.After(10 * time.Second):
					t.Fatalf("list_changed received: %v; want tools, prompts and resources", seen)
				}
			}
			tools, prompts, resources := toolNames(t, cs), promptNames(t, cs), resourceURIs(t, cs)
			if !slices.Contains(tools, "mcp__d__"+newT) || slices.Contains(tools, "mcp__d__"+oldT) {
				t.Errorf("tools after the restart: %v", tools)
			}
			if !slices.Contains(prompts, "mcp__d__"+newP) || slices.Contains(prompts, "mcp__d__"+oldP) {
				t.Errorf("prompts after the restart: %v", prompts)
			}
			if !slices.Contains(resources, newR) || slices.Contains(resources, oldR) {
				t.Errorf("resources after the restart: %v", resources)
			}
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__d__" + newT, Arguments: map[string]any{"message": "m"}})
			if err != nil || host.TextOf(res.Content) != newT+": m" {
				t.Errorf("the new tool: %+v %v", res, err)
			}
			pr, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "mcp__d__" + newP})
			if err != nil || host.TextOf([]mcp.Content{pr.Messages[0].Content}) != newP+" of d" {
				t.Errorf("the new prompt: %+v %v", pr, err)
			}
			if got := readText(t, cs, newR); got != newR+" of d" {
				t.Errorf("the new resource: %q", got)
			}
		})
	}
}

func textOf(res *mcp.CallToolResult) string {
	if res == nil {
		return ""
	}
	return host.TextOf(res.Content)
}

// TestPassthroughElicitationOlderUpstream: an upstream server of protocol
// 2025-11-25 asks with an elicitation/create request of its own during the
// call, which names no call. The gateway sends it to the client whose call
// is in flight; while calls of two clients are in flight it is refused,
// never shown to the wrong client.
func TestPassthroughElicitationOlderUpstream(t *testing.T) {
	t.Parallel()
	p := ptServe(t, ptOptions{servers: []*config.Server{demo("o", "-passthrough", "-protocol", oldProtocol)}})
	if len(p.problems) > 0 {
		t.Fatal(p.problems)
	}
	answering := func(user string, hold <-chan struct{}) *mcp.ClientOptions {
		return &mcp.ClientOptions{ElicitationHandler: func(ctx context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			if !strings.Contains(r.Params.Message, "question for "+user) {
				return nil, fmt.Errorf("%s was asked %q", user, r.Params.Message)
			}
			select {
			case <-hold:
			case <-time.After(2 * time.Second):
			}
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": user}}, nil
		}}
	}
	ask := func(cs *mcp.ClientSession, user string) (string, error) {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "mcp__o__ask", Arguments: map[string]any{"question": "question for " + user}})
		if err != nil {
			return "", err
		}
		if res.IsError {
			return "", fmt.Errorf("isError: %s", textOf(res))
		}
		return textOf(res), nil
	}
	now := make(chan struct{})
	close(now)
	for _, version := range protocols {
		t.Run("one client "+version, func(t *testing.T) {
			cs := p.dial(t, version, answering("carol", now))
			if got, err := ask(cs, "carol"); err != nil || got != "answer: carol" {
				t.Errorf("%q %v", got, err)
			}
		})
	}
	t.Run("two clients at once", func(t *testing.T) {
		hold := make(chan struct{})
		users := []string{"alice", "bob"}
		var wg sync.WaitGroup
		started := make(chan struct{}, 2)
		for _, user := range users {
			cs := p.dial(t, oldProtocol, answering(user, hold))
			wg.Add(1)
			go func() {
				defer wg.Done()
				started <- struct{}{}
				got, err := ask(cs, user)
				t.Logf("%s: %q %v", user, got, err)
				switch {
				case err == nil && got != "answer: "+user:
					t.Errorf("%s's call returned %q", user, got)
				case err != nil && !strings.Contains(err.Error(), "several clients"):
					t.Errorf("%s's call: %v; want its own answer or a refusal", user, err)
				}
			}()
		}
		<-started
		<-started
		time.Sleep(300 * time.Millisecond) // both calls are in flight
		close(hold)
		wg.Wait()
	})
}

// TestPassthroughUnaskedInputResponses: a 2026-07-28 client may send input
// responses without a request state (to a server whose input requests came
// without one, or ahead of the question); they reach the server, extra keys
// included, and the call completes.
func TestPassthroughUnaskedInputResponses(t *testing.T) {
	t.Parallel()
	srv := mcp.NewServer(&mcp.Implementation{Name: "mrtr"}, nil)
	srv.AddTool(&mcp.Tool{Name: "name", InputSchema: map[string]any{"type": "object"}}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if er, ok := req.Params.InputResponses["user_name"].(*mcp.ElicitResult); ok && er.Action == "accept" {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("hello %v (%d responses)", er.Content["name"], len(req.Params.InputResponses))}}}, nil
		}
		return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"user_name": &mcp.ElicitParams{Message: "name?", RequestedSchema: map[string]any{"type": "object"}}}}, nil
	})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true}))
	t.Cleanup(hs.Close)
	p := ptServe(t, ptOptions{servers: []*config.Server{{Name: "m", Transport: config.TransportHTTP, URL: hs.URL, Approved: true, ConnectTimeout: 5 * time.Second}}})
	if v := p.h.Serving().ProtocolVersion(context.Background(), "m"); v != newProtocol {
		t.Fatalf("upstream session at %q, want %s", v, newProtocol)
	}
	cs := p.dial(t, newProtocol, &mcp.ClientOptions{MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true}})
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "mcp__m__name", InputResponses: mcp.InputResponseMap{
		"user_name":     &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Alice"}},
		"unknown_key":   &mcp.ElicitResult{Action: "accept", Content: map[string]any{"foo": "bar"}},
		"mcphost-login": &mcp.ElicitResult{Action: "accept"}, // the gateway's own: not the server's
	}})
	if err != nil {
		t.Fatal(err)
	}
	if got := textOf(res); got != "hello Alice (2 responses)" {
		t.Errorf("result %q (input requests %v)", got, res.InputRequests)
	}
}

// TestPassthroughLegacySession: a server of 2026-07-28 whose tool asks by a
// request of its own (ask_old, as tools written for 2025-11-25 do), behind
// the gateway by default (legacy_session on unless false). A 2025-11-25
// client is asked and gets its answer (its calls go to a second upstream
// process at that version), as it would calling the server directly; a
// 2026-07-28 client gets the server's refusal, as it would directly too.
// With legacy_session = false the 2025-11-25 client gets the refusal.
func TestPassthroughLegacySession(t *testing.T) {
	t.Parallel()
	for _, legacy := range []*bool{nil, new(true), new(false)} {
		name := "default"
		if legacy != nil {
			name = fmt.Sprintf("legacy_session=%v", *legacy)
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := demo("n", "-passthrough")
			s.LegacySession = legacy
			p := ptServe(t, ptOptions{servers: []*config.Server{s}})
			if len(p.problems) > 0 {
				t.Fatal(p.problems)
			}
			for _, version := range protocols {
				asked := 0
				cs := p.dial(t, version, &mcp.ClientOptions{ElicitationHandler: func(ctx context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					asked++
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": "dave"}}, nil
				}})
				res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "mcp__n__ask_old", Arguments: map[string]any{"question": "name?"}})
				answered := err == nil && !res.IsError && textOf(res) == "answer: dave (mood: calm)" && asked == 1
				if want := (legacy == nil || *legacy) && version == oldProtocol; answered != want {
					t.Errorf("%s client: result %v, error %v, asked %d times; want answered: %v", version, res, err, asked, want)
				}
			}
		})
	}
}

// TestPassthroughRoots: a server's roots/list of its own during a
// 2025-11-25 client's call (on the second session, by default) is answered
// by that client's roots, through the gateway.
func TestPassthroughRoots(t *testing.T) {
	t.Parallel()
	s := demo("n", "-passthrough")
	p := ptServe(t, ptOptions{servers: []*config.Server{s}})
	if len(p.problems) > 0 {
		t.Fatal(p.problems)
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "rooted", Version: "1"}, nil)
	c.AddRoots(&mcp.Root{URI: "file:///home/dave/project"})
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: p.url}, &mcp.ClientSessionOptions{ProtocolVersion: oldProtocol})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "mcp__n__roots_old", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	if got := textOf(res); res.IsError || got != "roots: file:///home/dave/project" {
		t.Fatalf("result %q (error: %v); want the client's root", got, res.IsError)
	}
}

// TestPassthroughSubscriptionsEnd: the gateway holds an upstream
// subscription while a downstream session is subscribed: a session that
// subscribes twice and unsubscribes once is no longer subscribed (as the
// go-sdk server keeps it), and a session that ends without unsubscribing
// ends its subscriptions, upstream too.
func TestPassthroughSubscriptionsEnd(t *testing.T) {
	t.Parallel()
	p := twoServersFirstSession(t)
	ctx := context.Background()
	const uri = "mcphost://a/demo://whoami"
	observer := p.dial(t, oldProtocol, nil)
	// waitUpstream waits for the upstream's count of (un)subscribe requests.
	// (The gateway's session with the server is of 2026-07-28, where a
	// subscription is a subscriptions/listen stream the client does not
	// wait for: the server may see it after Subscribe returned.)
	waitUpstream := func(what string, want int) {
		t.Helper()
		var got any
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			res, err := observer.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__a__stats", Arguments: map[string]any{}})
			if err != nil || res.IsError {
				t.Fatalf("stats: %v %v", err, res)
			}
			got = res.StructuredContent.(map[string]any)["resources/"+what]
			if n, _ := got.(float64); int(n) == want {
				return
			}
		}
		t.Fatalf("the upstream saw %v %s requests, want %d", got, what, want)
	}
	twice := p.dial(t, oldProtocol, nil)
	for range 2 {
		if err := twice.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
			t.Fatal(err)
		}
	}
	waitUpstream("subscribe", 1)
	if err := twice.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: uri}); err != nil {
		t.Fatal(err)
	}
	waitUpstream("unsubscribe", 1)

	gone := p.dial(t, oldProtocol, nil)
	if err := gone.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
		t.Fatal(err)
	}
	waitUpstream("subscribe", 2)
	gone.Close()
	waitUpstream("unsubscribe", 2)

	// A 2026-07-28 client's subscription is a subscriptions/listen request;
	// its end (the request's context done) still unsubscribes upstream.
	listener := p.dial(t, newProtocol, nil)
	if err := listener.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
		t.Fatal(err)
	}
	waitUpstream("subscribe", 3)
	if err := listener.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: uri}); err != nil {
		t.Fatal(err)
	}
	waitUpstream("unsubscribe", 3)
}

// TestRevokedSubscriptionUpdates: a subscription is checked when it is
// made; a reload that comes to deny its resource's server to the session's
// principal stops its updates (as its reads are refused), while another
// principal's subscription to the same resource goes on; a reload that
// allows it again brings them back.
func TestRevokedSubscriptionUpdates(t *testing.T) {
	t.Parallel()
	servers := []*config.Server{withoutLegacy(demo("a", "-passthrough"))}
	gw := ptServe(t, ptOptions{servers: servers,
		http: &streamable.Options{OAuth: &streamable.InboundOAuth{Verify: gateway.UsersVerifier("alice", "bob"), Resource: "http://gateway.example/mcp"}}})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const readme = "demo://readme"
	dial := func(user string) (*mcp.ClientSession, chan string) {
		t.Helper()
		updates := make(chan string, 64)
		cs, err := mcp.NewClient(&mcp.Implementation{Name: user}, &mcp.ClientOptions{
			ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) { updates <- req.Params.URI },
		}).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: gw.url + "/", HTTPClient: &http.Client{Transport: &steered{urls: []string{gw.url}, token: user}}},
			&mcp.ClientSessionOptions{ProtocolVersion: oldProtocol})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: readme}); err != nil {
			t.Fatalf("%s subscribes: %v", user, err)
		}
		return cs, updates
	}
	_, alice := dial("alice")
	bob, bobs := dial("bob")
	touch := func() {
		t.Helper()
		res, err := bob.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__a__touch", Arguments: map[string]any{"uri": readme}})
		if err != nil || res.IsError {
			t.Fatalf("touch: %v %+v", err, res)
		}
	}
	got := func(ch chan string, wait time.Duration) bool {
		select {
		case <-ch:
			return true
		case <-time.After(wait): // (waiting for an update that may not come)
			return false
		}
	}
	drain := func(ch chan string) {
		for got(ch, 500*time.Millisecond) {
		}
	}
	// Both standalone streams open (an update before then has nowhere to
	// go): each gets an update of a touch.
	for i := 0; ; i++ {
		touch()
		if got(bobs, 200*time.Millisecond) && got(alice, 200*time.Millisecond) {
			break
		}
		if i == 20 {
			t.Fatal("no update of the subscribed resource reached both clients")
		}
	}
	drain(alice)
	drain(bobs)
	denyAlice := config.PermissionRule{Behavior: permissions.Deny, Pattern: "mcp__a",
		For: &permissions.Principals{Subjects: []string{"alice"}}, Origin: config.Origin{Scope: config.ScopeUser, File: "u.hcl"}}
	for _, step := range []struct {
		rules     []config.PermissionRule
		aliceGets bool
	}{
		{rules: []config.PermissionRule{denyAlice}, aliceGets: false},
		{rules: nil, aliceGets: true},
	} {
		if _, err := gw.h.Reload(ctx, &config.Config{Servers: servers, Permissions: step.rules, DefaultMode: "allow_all"}, time.Second); err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			touch()
			if !got(bobs, 5*time.Second) {
				t.Fatalf("rules %v, touch %d: bob got no update", step.rules, i)
			}
			if g := got(alice, 300*time.Millisecond); g != step.aliceGets {
				t.Fatalf("rules %v, touch %d: alice got an update: %v, want %v", step.rules, i, g, step.aliceGets)
			}
		}
	}
}

// TestUpdatesNotHeldBySubscribe: an upstream's resource update reaches its
// subscribers while another upstream takes its time to answer a subscribe
// (the gateway's subscription table is held across that subscribe; the
// check of an update's recipient must not wait on it, nor hold up the
// upstream's notifications).
func TestUpdatesNotHeldBySubscribe(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	upstream := func(name string, hold bool) (*mcp.Server, *config.Server) {
		srv := mcp.NewServer(&mcp.Implementation{Name: name}, &mcp.ServerOptions{
			SubscribeHandler: func(ctx context.Context, _ *mcp.SubscribeRequest) error {
				if hold {
					select {
					case <-release:
					case <-ctx.Done():
					}
				}
				return nil
			},
			UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
		})
		uri := name + "://r"
		srv.AddResource(&mcp.Resource{URI: uri, Name: "r"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, Text: "r"}}}, nil
		})
		hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
		t.Cleanup(hs.Close)
		return srv, &config.Server{Name: name, Transport: "http", URL: hs.URL, Approved: true, ConnectTimeout: 10 * time.Second}
	}
	fast, fastCfg := upstream("fast", false)
	_, slowCfg := upstream("slow", true)
	gw := ptServe(t, ptOptions{servers: []*config.Server{fastCfg, slowCfg}})
	defer close(release) // (before the gateway's cleanup)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dial := func(updates chan string) *mcp.ClientSession {
		return gw.dial(t, oldProtocol, &mcp.ClientOptions{
			ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) { updates <- req.Params.URI },
		})
	}
	updates := make(chan string, 64)
	alice := dial(updates)
	if err := alice.Subscribe(ctx, &mcp.SubscribeParams{URI: "fast://r"}); err != nil {
		t.Fatal(err)
	}
	// The first update may precede alice's standalone stream: updated
	// until one arrives.
	arrived := func(wait time.Duration) bool {
		for deadline := time.Now().Add(wait); time.Now().Before(deadline); {
			if err := fast.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: "fast://r"}); err != nil {
				t.Fatal(err)
			}
			select {
			case <-updates:
				return true
			case <-time.After(100 * time.Millisecond): // (polling for the stream to be open)
			}
		}
		return false
	}
	if !arrived(10 * time.Second) {
		t.Fatal("no update reached alice")
	}
	// bob's subscribe to slow://r is held by its upstream.
	bob := dial(make(chan string, 1))
	subscribing := make(chan error, 1)
	go func() { subscribing <- bob.Subscribe(ctx, &mcp.SubscribeParams{URI: "slow://r"}) }()
	time.Sleep(200 * time.Millisecond) // (bob's subscribe on its way upstream)
	if !arrived(3 * time.Second) {
		t.Fatal("an update of fast://r waited for the subscribe to slow://r")
	}
	select {
	case err := <-subscribing:
		t.Fatalf("bob's subscribe was not held: %v", err)
	default:
	}
}

// TestPassthroughSamplingOlderUpstream: a go-sdk server of 2025-11-25 (a
// stateful streamable HTTP server) samples by a request of its own during a
// call; a client of either era answers through the gateway. A 2026-07-28
// client answers the gateway's input-required result, whose sampling
// response go-sdk decodes as a CreateMessageWithToolsResult: it reaches the
// server as the plain result it asked for (it failed with -32602 before).
func TestPassthroughSamplingOlderUpstream(t *testing.T) {
	t.Parallel()
	srv := mcp.NewServer(&mcp.Implementation{Name: "sampler"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "sample"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		res, err := req.Session.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 10,
			Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "say hi"}}}})
		if err != nil {
			return nil, nil, fmt.Errorf("sampling: %w", err)
		}
		tc, _ := res.Content.(*mcp.TextContent)
		if tc == nil {
			return nil, nil, fmt.Errorf("sampling: content %T", res.Content)
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("%s said %q (%s)", res.Model, tc.Text, res.StopReason)}}}, nil, nil
	})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(hs.Close)
	p := ptServe(t, ptOptions{servers: []*config.Server{{Name: "s", Transport: config.TransportHTTP, URL: hs.URL, Approved: true, ConnectTimeout: 5 * time.Second}}})
	if v := p.h.Serving().ProtocolVersion(context.Background(), "s"); v != oldProtocol {
		t.Fatalf("upstream session at %q, want %s", v, oldProtocol)
	}
	for _, version := range protocols {
		t.Run(version, func(t *testing.T) {
			sampled := 0
			cs := p.dial(t, version, &mcp.ClientOptions{CreateMessageHandler: func(_ context.Context, r *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
				sampled++
				return &mcp.CreateMessageResult{Model: "m-" + version, Role: "assistant", Content: &mcp.TextContent{Text: "hi"}, StopReason: "endTurn"}, nil
			}})
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "mcp__s__sample", Arguments: map[string]any{}})
			if err != nil {
				t.Fatal(err)
			}
			if want := fmt.Sprintf("m-%s said %q (endTurn)", version, "hi"); res.IsError || textOf(res) != want || sampled != 1 {
				t.Fatalf("result %q (isError %v, sampled %d times); want %q", textOf(res), res.IsError, sampled, want)
			}
		})
	}
}

// TestPassthroughLegacySessionClientsAtOnce: 2025-11-25 clients call a
// tool that asks by a request of its own (ask_old) on a stdio server of
// 2026-07-28 at once, through a default gateway over HTTP. On a second
// session the server's requests name no call, so each serves one client's
// calls at a time: a further one is opened for each client up to
// legacy_pool (4 by default), and only the clients beyond it wait. Each
// client is asked once, its own question, and gets its own answer. (Before
// the pool, every second client waited — pool 1's row — and after 3 s went
// to the first session, where ask_old fails.)
func TestPassthroughLegacySessionClientsAtOnce(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		pool, clients, atOnce int
	}{
		{1, 2, 1},
		{2, 3, 2},
		{0, 4, 4}, // the default
	} {
		t.Run(fmt.Sprintf("pool %d, %d clients", tc.pool, tc.clients), func(t *testing.T) {
			t.Parallel()
			srv := demo("n", "-passthrough")
			srv.LegacyPool = tc.pool
			p := ptServe(t, ptOptions{servers: []*config.Server{srv}})
			if len(p.problems) > 0 {
				t.Fatal(p.problems)
			}
			hold := make(chan struct{})
			var release sync.Once
			t.Cleanup(func() { release.Do(func() { close(hold) }) }) // (a failed check must not leave the calls waiting)
			asked := make(chan string, tc.clients)
			var wg sync.WaitGroup
			for i := range tc.clients {
				user := fmt.Sprintf("user%d", i)
				cs := p.dial(t, oldProtocol, &mcp.ClientOptions{ElicitationHandler: func(ctx context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					asked <- user + ": " + r.Params.Message
					<-hold
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": user}}, nil
				}})
				wg.Add(1)
				go func() {
					defer wg.Done()
					res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "mcp__n__ask_old", Arguments: map[string]any{"question": "for " + user}})
					if err != nil || res.IsError || textOf(res) != "answer: "+user+" (mood: calm)" {
						t.Errorf("%s's call: %v, %v", user, textOf(res), err)
					}
				}()
			}
			var got []string
			for range tc.atOnce {
				select {
				case a := <-asked:
					got = append(got, a)
				case <-time.After(20 * time.Second):
					t.Fatalf("asked at once: %q; want %d clients", got, tc.atOnce)
				}
			}
			// The others wait for a second session, with atOnce in flight
			// there, and have not been asked.
			for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
				inFlight, waiting := p.h.Connections().SecondSession(context.Background(), "n")
				if inFlight == tc.atOnce && waiting == tc.clients-tc.atOnce {
					break
				}
				if inFlight > tc.atOnce || time.Now().After(deadline) {
					t.Fatalf("second sessions: %d calls in flight, %d waiting; want %d and %d", inFlight, waiting, tc.atOnce, tc.clients-tc.atOnce)
				}
			}
			if n := p.h.Connections().SecondSessions(context.Background(), "n"); n != tc.atOnce {
				t.Fatalf("%d second sessions open, want %d", n, tc.atOnce)
			}
			select {
			case a := <-asked:
				t.Fatalf("asked beyond the pool's bound: %q besides %q", a, got)
			default:
			}
			release.Do(func() { close(hold) })
			wg.Wait()
			close(asked)
			for a := range asked {
				got = append(got, a)
			}
			if len(got) != tc.clients {
				t.Errorf("asked: %q; want each of %d clients once", got, tc.clients)
			}
			for _, a := range got {
				if who, q, _ := strings.Cut(a, ": "); q != "for "+who {
					t.Errorf("%s", a)
				}
			}
		})
	}
}
