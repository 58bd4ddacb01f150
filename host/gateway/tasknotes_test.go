package gateway_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/gateway"
	"github.com/mcphost/mcphost/host/gateway/streamable"
	"github.com/mcphost/mcphost/host/state"
	"github.com/mcphost/mcphost/internal/sealbox"
)

// statusNote is a notifications/tasks/status as a client reads it.
type statusNote struct {
	Method string         `json:"method"`
	Params map[string]any `json:"params"`
}

// taskNotesClient is a 2025-11-25 client of the gateway that creates a
// task and reads the task status notifications it is sent.
type taskNotesClient interface {
	taskClient
	// statusNotes returns the status notifications read so far, waiting
	// up to d for at least one.
	statusNotes(t *testing.T, d time.Duration) []statusNote
}

// stdioNotesClient is a stdioTaskClient reading its notifications.
type stdioNotesClient struct {
	*stdioTaskClient
	seen int // (how many of notes statusNotes has returned: it returns each once)
}

func (c *stdioNotesClient) statusNotes(t *testing.T, d time.Duration) []statusNote {
	deadline := time.Now().Add(d)
	for pinged := false; ; pinged = true {
		var out []statusNote
		for _, b := range c.notes[c.seen:] {
			var n statusNote
			if json.Unmarshal(b, &n) == nil && n.Method == "notifications/tasks/status" {
				out = append(out, n)
			}
		}
		if len(out) > 0 || pinged && time.Now().After(deadline) { // (at least one ping: what came before it is read)
			c.seen = len(c.notes)
			return out
		}
		time.Sleep(20 * time.Millisecond)
		c.send(t, "ping", map[string]any{}, true) // (reads what came before its answer)
	}
}

// httpNotesClient is an httpClient2025 reading its standalone stream (a
// GET).
type httpNotesClient struct {
	*httpClient2025
	got chan statusNote
}

// newHTTPNotesClient opens a session at url, and its standalone stream at
// getURL (another replica's, say).
func newHTTPNotesClient(t *testing.T, url, getURL string) *httpNotesClient {
	return newHTTPNotesClientAs(t, url, getURL, "")
}

// newHTTPNotesClientAs is newHTTPNotesClient sending the bearer token
// bearer.
func newHTTPNotesClientAs(t *testing.T, url, getURL, bearer string) *httpNotesClient {
	t.Helper()
	c := &httpNotesClient{httpClient2025: newHTTPClient2025As(t, url, bearer), got: make(chan statusNote, 16)}
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, getURL, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", c.sid)
	req.Header.Set("Mcp-Protocol-Version", oldProtocol)
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		cancel()
		resp.Body.Close()
		t.Fatalf("GET: %s", resp.Status)
	}
	done := make(chan struct{})
	go func() { // ends with the stream (cleanup)
		defer close(done)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			data, ok := bytes.CutPrefix(sc.Bytes(), []byte("data: "))
			var n statusNote
			if ok && json.Unmarshal(data, &n) == nil && n.Method == "notifications/tasks/status" {
				c.got <- n
			}
		}
	}()
	t.Cleanup(func() { cancel(); resp.Body.Close(); <-done })
	return c
}

func (c *httpNotesClient) statusNotes(t *testing.T, d time.Duration) []statusNote {
	var out []statusNote
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		select {
		case n := <-c.got:
			out = append(out, n)
		case <-timer.C:
			return out
		default:
			if len(out) > 0 {
				return out
			}
			select {
			case n := <-c.got:
				out = append(out, n)
			case <-timer.C:
				return out
			}
		}
	}
}

// createNotesTask calls tool (arguments {"message": message}) through c
// as a task (ttl 60000) and returns the gateway's id of the task, failing
// the test unless it is one (mcpt-).
func createNotesTask(t *testing.T, c taskClient, tool, message string) string {
	t.Helper()
	res := c.call(t, "tools/call", map[string]any{"name": tool, "arguments": map[string]any{"message": message}, "task": map[string]any{"ttl": 60000}})
	task, _ := res.Result["task"].(map[string]any)
	id, _ := task["taskId"].(string)
	if !strings.HasPrefix(id, "mcpt-") {
		t.Fatalf("tools/call %s: %+v %+v, want a task", tool, res.Result, res.Error)
	}
	return id
}

// getNotesTask gets, through c, the task of the gateway's id id, failing
// the test on an error.
func getNotesTask(t *testing.T, c taskClient, id string) {
	t.Helper()
	if res := c.call(t, "tasks/get", map[string]any{"taskId": id}); res.Error != nil {
		t.Fatalf("tasks/get %s: %+v", id, res.Error)
	}
}

// pushStatusNotes has a tasks upstream send statusNotes(id) on its
// standalone stream (push: its push).
func pushStatusNotes(push chan<- []byte, id string) {
	for _, n := range bytes.Split(bytes.TrimSpace(statusNotes(id)), []byte("\n")) {
		push <- n
	}
}

// noneAfterBarrier checks that other (named who) got no status
// notification by the time creator, which has read its first, reads the
// one send makes the upstream send again: the barrier (the creator's
// second is handed on after whatever the first notifications were handed
// on to).
func noneAfterBarrier(t *testing.T, send func(), creator, other taskNotesClient, who string) {
	t.Helper()
	send()
	if got := creator.statusNotes(t, 5*time.Second); len(got) != 1 {
		t.Fatalf("the creator got %+v the second time, want 1 status notification", got)
	}
	if got := other.statusNotes(t, 0); len(got) != 0 {
		t.Errorf("%s got %+v, want nothing", who, got)
	}
}

// replicaOptions returns the options of replicas of one gateway: each call
// a fresh gateway.Options, all with one shared state (local) and one key.
func replicaOptions(t *testing.T) func() *gateway.Options {
	t.Helper()
	st, err := state.NewLocal(nil, "")
	if err != nil {
		t.Fatal(err)
	}
	k, err := sealbox.Parse("MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=") // (32 bytes, base64)
	if err != nil {
		t.Fatal(err)
	}
	return func() *gateway.Options { return &gateway.Options{Keys: k, State: st} }
}

// notesReplicas serves two replicas, a and b, of a gateway of one tasks
// upstream (2025-11-25) that sends its tasks' statuses with its answers
// to tasks/get (notes).
func notesReplicas(t *testing.T) (a, b *ptGateway) {
	t.Helper()
	up, url := newTasksUpstream(t, oldProtocol)
	up.notes = true
	opts := replicaOptions(t)
	server := []*config.Server{{Name: "t", Transport: config.TransportHTTP, URL: url, Approved: true, ConnectTimeout: 5 * time.Second}}
	return ptServe(t, ptOptions{servers: server, gopts: opts()}), ptServe(t, ptOptions{servers: server, gopts: opts()})
}

// TestTaskStatusReachesItsCreator: a 2025-11-25 task's status notification
// from its server (notifications/tasks/status, which the go-sdk client and
// server both drop) reaches the client session that created the task, with
// the gateway's id of the task in place of the server's (taskId and the
// related-task _meta) and the rest as the server sent it; another session
// of the gateway gets nothing, and a notification of a task no client
// created (up-other) reaches no one. Both fronts (stdio: the line writer;
// HTTP: the session's standalone stream), over an HTTP upstream (the
// notifications on a relayed request's event stream, or on the upstream
// session's standalone stream, which the go-sdk client reads) and a stdio
// one (read by the connection's read loop). On the old code no client got any status
// notification.
func TestTaskStatusReachesItsCreator(t *testing.T) {
	t.Parallel()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, front := range []string{"stdio", "http"} {
		for _, upstream := range []string{"http", "http-get", "stdio"} {
			t.Run(front+" front, "+upstream+" upstream", func(t *testing.T) {
				t.Parallel()
				server := &config.Server{Name: "t", Approved: true, ConnectTimeout: 10 * time.Second}
				tool := "mcp__t__job"
				var push chan []byte
				switch upstream {
				case "http":
					up, url := newTasksUpstream(t, oldProtocol)
					up.notes = true
					server.Transport, server.URL, tool = config.TransportHTTP, url, "mcp__t__echo"
				case "http-get":
					up, url := newTasksUpstream(t, oldProtocol)
					push = make(chan []byte, 4)
					up.push = push
					server.Transport, server.URL, tool = config.TransportHTTP, url, "mcp__t__echo"
				default:
					server.Transport, server.Command, server.Env = config.TransportStdio, exe, map[string]string{rawToolsChildEnv: legacyTasksEra}
				}
				p := ptServe(t, ptOptions{servers: []*config.Server{server}})
				if len(p.problems) > 0 {
					t.Fatalf("sync: %v", p.problems)
				}
				client := func() taskNotesClient {
					if front == "stdio" {
						return &stdioNotesClient{stdioTaskClient: newStdioTaskClient(t, p.g, oldProtocol, map[string]any{})}
					}
					return newHTTPNotesClient(t, p.url, p.url)
				}
				creator, other := client(), client()
				id := createNotesTask(t, creator, tool, "hi")
				send := func() { // (the upstream sends statusNotes("up-1"))
					if push != nil {
						pushStatusNotes(push, "up-1")
					} else {
						getNotesTask(t, creator, id) // (tasks/get makes the upstream send the notifications)
					}
				}
				send()
				got := creator.statusNotes(t, 5*time.Second)
				if len(got) != 1 {
					t.Fatalf("the creator got %d status notifications (%+v), want 1", len(got), got)
				}
				n := got[0].Params
				rt, _ := n["_meta"].(map[string]any)["io.modelcontextprotocol/related-task"].(map[string]any)
				if n["taskId"] != id || rt["taskId"] != id || n["status"] != "working" || n["statusMessage"] != "half way" || n["pollInterval"] != float64(500) || n["ttl"] != float64(60000) {
					t.Errorf("the creator got %+v, want the upstream's under the task id %s", n, id)
				}
				if b, _ := json.Marshal(got); bytes.Contains(b, []byte("up-")) {
					t.Errorf("an upstream task id reached the client: %s", b)
				}
				noneAfterBarrier(t, send, creator, other, "another session")
			})
		}
	}
}

// TestTaskStatusAcrossReplicas: the session that created a task has its
// standalone stream (GET) on another replica than the one whose upstream
// connection created the task and reads its notifications: the
// notification is passed on through the shared state (the sessions
// channel, sealed) to the replica holding the GET, which writes it. On
// the old code nothing was written anywhere. (That a replica of other keys
// cannot open the sealed change is the sessions channel's own test's.)
func TestTaskStatusAcrossReplicas(t *testing.T) {
	t.Parallel()
	a, b := notesReplicas(t)
	c := newHTTPNotesClient(t, a.url, b.url)
	id := createNotesTask(t, c, "mcp__t__echo", "hi")
	getNotesTask(t, c, id)
	got := c.statusNotes(t, 5*time.Second)
	if len(got) != 1 || got[0].Params["taskId"] != id {
		t.Fatalf("the creator's stream on b got %+v, want the status of %s", got, id)
	}
}

// TestTaskStatusPerPrincipal: under inbound OAuth, alice's task's status
// notification from a server connection both principals share reaches
// alice's session, under her id of the task, and not bob's (who holds a
// session of his own with its stream open). On the old code neither got
// anything.
func TestTaskStatusPerPrincipal(t *testing.T) {
	t.Parallel()
	up, url := newTasksUpstream(t, oldProtocol)
	up.notes = true
	p := serveTasksAt(t, url, ptOptions{http: &streamable.Options{OAuth: &streamable.InboundOAuth{Verify: gateway.UsersVerifier("alice", "bob"), Resource: "http://gateway.example/mcp"}}})
	alice := newHTTPNotesClientAs(t, p.url, p.url, "alice")
	bob := newHTTPNotesClientAs(t, p.url, p.url, "bob")
	id := createNotesTask(t, alice, "mcp__t__echo", "hi")
	getNotesTask(t, alice, id)
	if got := alice.statusNotes(t, 5*time.Second); len(got) != 1 || got[0].Params["taskId"] != id {
		t.Errorf("alice got %+v, want the status of %s", got, id)
	}
	noneAfterBarrier(t, func() { getNotesTask(t, alice, id) }, alice, bob, "bob")
}

// TestTaskStatusSlowClientHoldsOnlyItself: a stdio client that stops
// reading its stdout (an io.Pipe: the first write blocks) while its task's
// server pushes many statuses must not hold another session's
// notification: each session's notifications are written by its own queue
// (gateway.NoteQueue). On the old code one gateway-wide goroutine wrote
// them all, blocked on the first write to the stalled client, and the
// other session got nothing.
func TestTaskStatusSlowClientHoldsOnlyItself(t *testing.T) {
	t.Parallel()
	up, url := newTasksUpstream(t, oldProtocol)
	push := make(chan []byte, 2000)
	up.push = push
	server := &config.Server{Name: "t", Transport: config.TransportHTTP, URL: url, Approved: true, ConnectTimeout: 10 * time.Second}
	p := ptServe(t, ptOptions{servers: []*config.Server{server}})
	if len(p.problems) > 0 {
		t.Fatalf("sync: %v", p.problems)
	}
	stalled := newStdioTaskClient(t, p.g, oldProtocol, map[string]any{})
	createNotesTask(t, stalled, "mcp__t__echo", "hi") // up-1; stalled reads nothing more
	y := &stdioNotesClient{stdioTaskClient: newStdioTaskClient(t, p.g, oldProtocol, map[string]any{})}
	yid := createNotesTask(t, y, "mcp__t__echo", "hi") // up-2
	note := func(id, msg string) []byte {
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "notifications/tasks/status", "params": map[string]any{
			"taskId": id, "status": "working", "statusMessage": msg, "createdAt": "2026-11-28T12:00:00Z", "lastUpdatedAt": "2026-11-28T12:00:01Z", "ttl": 60000}})
		return b
	}
	for i := range 1000 {
		push <- note("up-1", fmt.Sprint("step ", i))
	}
	push <- note("up-2", "y's")
	got := y.statusNotes(t, 2*time.Second)
	if len(got) != 1 || got[0].Params["taskId"] != yid || got[0].Params["statusMessage"] != "y's" {
		t.Fatalf("the reading session got %+v, want its task's status", got)
	}
}

// TestTaskStatusAfterEviction: a session opened on replica b (its GET
// there too) creates a task through replica a, whose copy of the session
// is then evicted (a's cap of one session, taken by another client); the
// task's status, which a's upstream connection receives, still reaches the
// creator's stream on b: the receiver names the session by its id, and a
// replica that no longer holds it publishes the note for the one that
// does. On the old code the receiver held a's go-sdk session, which a no
// longer held: the note was dropped.
func TestTaskStatusAfterEviction(t *testing.T) {
	t.Parallel()
	up, url := newTasksUpstream(t, oldProtocol)
	push := make(chan []byte, 4)
	up.push = push
	opts := replicaOptions(t)
	server := []*config.Server{{Name: "t", Transport: config.TransportHTTP, URL: url, Approved: true, ConnectTimeout: 5 * time.Second}}
	a := ptServe(t, ptOptions{servers: server, gopts: opts(), http: &streamable.Options{MaxSessions: 1}})
	b := ptServe(t, ptOptions{servers: server, gopts: opts()})
	c := newHTTPNotesClient(t, b.url, b.url)
	c.url = a.url // its requests now go through a, which rebuilds the session
	id := createNotesTask(t, c, "mcp__t__echo", "hi")
	newHTTPClient2025(t, a.url) // takes a's one session slot: a's copy of c's is evicted
	pushStatusNotes(push, "up-1")
	got := c.statusNotes(t, 5*time.Second)
	if len(got) != 1 || got[0].Params["taskId"] != id {
		t.Fatalf("the creator's stream on b got %+v, want the status of %s", got, id)
	}
}

// TestTaskStatusOnPollingReplica: a task created through replica a is
// polled (tasks/get) through replica b, whose upstream connection did not
// create it; the statuses the server sends on the tasks/get's own stream
// go to the caller of that tasks/get, under its id of the task, once,
// wherever its GET is (a or b); the other task's status on that stream
// (up-other) reaches no one. On the old code b's connection knew no
// receiver of the task: nothing reached the client.
func TestTaskStatusOnPollingReplica(t *testing.T) {
	t.Parallel()
	for _, getOn := range []string{"a", "b"} {
		t.Run("GET on "+getOn, func(t *testing.T) {
			t.Parallel()
			a, b := notesReplicas(t)
			get := a.url
			if getOn == "b" {
				get = b.url
			}
			c := newHTTPNotesClient(t, a.url, get)
			id := createNotesTask(t, c, "mcp__t__echo", "hi")
			c.url = b.url
			getNotesTask(t, c, id)
			got := c.statusNotes(t, 5*time.Second)
			if len(got) != 1 || got[0].Params["taskId"] != id {
				t.Fatalf("the creator's stream got %+v, want one status of %s", got, id)
			}
			if b, _ := json.Marshal(got); bytes.Contains(b, []byte("up-")) {
				t.Errorf("an upstream task id reached the client: %s", b)
			}
		})
	}
}

// TestTaskStatusAfterItsTask: a stdio server that sends its task's status
// before the CreateTaskResult (which the connection keeps as an early
// note): the client of the stdio front reads the result, which gives it
// the task's id, before the status of that id. On the old code the early
// status was handed on before the result was written.
func TestTaskStatusAfterItsTask(t *testing.T) {
	t.Parallel()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	server := &config.Server{Name: "t", Approved: true, ConnectTimeout: 10 * time.Second, Transport: config.TransportStdio, Command: exe, Env: map[string]string{rawToolsChildEnv: legacyTasksEra}}
	for range 3 { // (the old code's order was a race: tried a few times; a gateway each: the server gives every task the id up-1)
		p := ptServe(t, ptOptions{servers: []*config.Server{server}})
		if len(p.problems) > 0 {
			t.Fatalf("sync: %v", p.problems)
		}
		c := &stdioNotesClient{stdioTaskClient: newStdioTaskClient(t, p.g, oldProtocol, map[string]any{})}
		id := createNotesTask(t, c, "mcp__t__job", "early")
		if len(c.notes) != 0 {
			t.Fatalf("read before the result: %s", c.notes)
		}
		if got := c.statusNotes(t, 5*time.Second); len(got) != 1 || got[0].Params["taskId"] != id {
			t.Fatalf("after the result: %+v, want the status of %s", got, id)
		}
	}
}
