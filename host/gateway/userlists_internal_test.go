package gateway

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestListChangedSenderOutermost (review57 #13): every sending middleware
// of the go-sdk server other than listChangedSender sees a per-user
// list_changed as the list_changed it is, not as the
// notifications/progress userListChanged sends it as; a kind naming no
// list is logged and not sent. (Before, listChangedSender was the
// innermost: the others saw a progress without progressToken, and an
// unknown kind was dropped silently.)
func TestListChangedSenderOutermost(t *testing.T) {
	var logs bytes.Buffer
	g := &Gateway{log: hclog.New(&hclog.LoggerOptions{Output: &logs, Level: hclog.Warn})}
	ms := g.sendingMiddlewares()
	var seen []string // what each middleware was called with, in order
	var sent []string // what reached the connection
	handler := func(_ context.Context, method string, _ mcp.Request) (mcp.Result, error) {
		sent = append(sent, method)
		return nil, nil
	}
	var h mcp.MethodHandler = handler
	for i := len(ms) - 1; i >= 0; i-- { // (as the go-sdk: the first is the outermost)
		inner := ms[i](h)
		h = func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			seen = append(seen, method)
			return inner(ctx, method, req)
		}
	}
	var ss *mcp.ServerSession
	send := func(kind string) {
		ctx := context.WithValue(context.Background(), listChangedKey{}, kind)
		if _, err := h(ctx, "notifications/progress", &mcp.ServerRequest[*mcp.ProgressNotificationParams]{Session: ss, Params: &mcp.ProgressNotificationParams{}}); err != nil {
			t.Fatal(err)
		}
	}
	send("notifications/prompts/list_changed")
	if len(seen) != len(ms) || seen[0] != "notifications/progress" {
		t.Fatalf("middlewares called with %q", seen)
	}
	for i, m := range seen[1:] {
		if m != "notifications/prompts/list_changed" {
			t.Errorf("sending middleware %d of %d saw %q, want notifications/prompts/list_changed", i+2, len(ms), m)
		}
	}
	if len(sent) != 1 || sent[0] != "notifications/prompts/list_changed" {
		t.Errorf("sent %q, want the list_changed", sent)
	}
	seen, sent = nil, nil
	send("notifications/bogus/list_changed")
	if len(sent) != 0 {
		t.Errorf("an unknown kind: sent %q, want nothing", sent)
	}
	if !strings.Contains(logs.String(), "notifications/bogus/list_changed") {
		t.Errorf("an unknown kind not logged: %q", logs.String())
	}
}
