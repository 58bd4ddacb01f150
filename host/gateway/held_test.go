package gateway

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/mcphost/mcphost/host/gateway/cluster"
	"github.com/mcphost/mcphost/internal/sealbox"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// heldReq is a tools/call request of a client that can be asked (the
// rounds need only its params and capabilities).
func heldReq() *mcp.CallToolRequest {
	return &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "t"}}
}

func withElicitation(r *heldRequester) *heldRequester {
	r.hc.caps = &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{}}
	return r
}

// TestHeldCallRounds: a held call asks twice; each question is one round's
// input-required result, each answer goes to the question it answers, and
// the third round returns the call's result.
func TestHeldCallRounds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHeldCalls()
		defer h.close()
		hc := h.start(heldReq(), func(ctx context.Context, r *heldRequester) (*mcp.CallToolResult, error) {
			r = withElicitation(r)
			var got []string
			for _, q := range []string{"first?", "second?"} {
				res, err := r.Elicit(ctx, &mcp.ElicitParams{Message: q})
				if err != nil {
					return nil, err
				}
				got = append(got, fmt.Sprint(res.Content["a"]))
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprint(got)}}}, nil
		})
		seal := func(key string) string { return key }
		ctx := context.Background()
		var keys []string
		for i, q := range []string{"first?", "second?"} {
			res, asked, err := h.round(ctx, heldReq(), hc, seal)
			if err != nil || !asked {
				t.Fatalf("round for %s: asked %v, %v", q, asked, err)
			}
			if p, ok := res.InputRequests[heldKey].(*mcp.ElicitParams); !ok || p.Message != q || res.RequestState != fmt.Sprintf("%s/%d", hc.id, i+1) {
				t.Fatalf("round for %s: %+v", q, res)
			}
			keys = append(keys, res.RequestState)
			got, seq := h.get(res.RequestState)
			if got != hc {
				t.Fatal("the held call is not found by its question's key")
			}
			if i > 0 {
				// A replay of the first round's state does not answer
				// the second question.
				_, old := h.get(keys[0])
				if err := hc.answer(ctx, heldReq(), old, &mcp.ElicitResult{Action: "accept", Content: map[string]any{"a": "replayed"}}); err == nil {
					t.Fatal("a replayed state answered a later question")
				}
			}
			if err := hc.answer(ctx, heldReq(), seq, nil); err == nil {
				t.Fatal("a retry without an answer was taken")
			}
			if err := hc.answer(ctx, heldReq(), seq, &mcp.ElicitResult{Action: "accept", Content: map[string]any{"a": q[:1]}}); err != nil {
				t.Fatal(err)
			}
		}
		res, asked, err := h.round(ctx, heldReq(), hc, seal)
		if err != nil || asked || len(res.Content) != 1 || res.Content[0].(*mcp.TextContent).Text != "[f s]" {
			t.Fatalf("last round: %+v %v %v", res, asked, err)
		}
		if got, _ := h.get(keys[1]); got != nil {
			t.Error("an ended call is still found")
		}
		if err := hc.answer(ctx, heldReq(), 2, &mcp.ElicitResult{Action: "accept"}); err == nil {
			t.Error("an answer to an ended call was taken")
		}
	})
}

// TestHeldCallExpires: a client that does not come back within the limit
// ends the call (the server's request fails), and the call is forgotten.
func TestHeldCallExpires(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHeldCalls()
		defer h.close()
		ended := make(chan error, 1)
		hc := h.start(heldReq(), func(ctx context.Context, r *heldRequester) (*mcp.CallToolResult, error) {
			_, err := withElicitation(r).Elicit(ctx, &mcp.ElicitParams{Message: "anyone?"})
			ended <- err
			return nil, err
		})
		res, asked, err := h.round(context.Background(), heldReq(), hc, func(key string) string { return key })
		if !asked || err != nil {
			t.Fatalf("asked %v, %v", asked, err)
		}
		time.Sleep(h.limit - time.Second)
		synctest.Wait()
		if got, _ := h.get(res.RequestState); got == nil {
			t.Fatal("the call ended before the limit")
		}
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if err := <-ended; !errors.Is(err, context.Canceled) {
			t.Errorf("the server's request ended with %v", err)
		}
		if got, _ := h.get(res.RequestState); got != nil {
			t.Error("an expired call is still found")
		}
	})
}

// TestHeldCallCancelledWithItsRequest: a client that cancels its request
// (or goes away) while the call runs ends the call.
func TestHeldCallCancelledWithItsRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHeldCalls()
		defer h.close()
		ended := make(chan error, 1)
		hc := h.start(heldReq(), func(ctx context.Context, _ *heldRequester) (*mcp.CallToolResult, error) {
			<-ctx.Done()
			ended <- ctx.Err()
			return nil, ctx.Err()
		})
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			time.Sleep(time.Second)
			cancel()
		}()
		if _, _, err := h.round(ctx, heldReq(), hc, func(key string) string { return key }); !errors.Is(err, context.Canceled) {
			t.Errorf("round: %v", err)
		}
		if err := <-ended; !errors.Is(err, context.Canceled) {
			t.Errorf("the call ended with %v", err)
		}
	})
}

// TestHeldRequesterCapabilities: what the client did not declare is refused
// at once, never sent to it.
func TestHeldRequesterCapabilities(t *testing.T) {
	r := &heldRequester{hc: &heldCall{ctx: context.Background(), caps: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}}}}}
	ctx := context.Background()
	if _, err := r.Elicit(ctx, &mcp.ElicitParams{Mode: "url", URL: "https://x.example"}); err == nil {
		t.Error("URL elicitation of a client without it")
	}
	if _, err := r.CreateMessage(ctx, &mcp.CreateMessageParams{}); err == nil {
		t.Error("sampling of a client without it")
	}
	if _, err := r.ListRoots(ctx, &mcp.ListRootsParams{}); err == nil {
		t.Error("roots of a client without them")
	}
}

// TestHeldCallEndsWhileAsking: a server that stops waiting for its answer
// ends the call while the question is out with the client; the client's
// retry gets the call's outcome (not "ended"). Unanswered, the outcome is
// dropped with the call at the limit.
func TestHeldCallEndsWhileAsking(t *testing.T) {
	for _, retry := range []bool{true, false} {
		t.Run(fmt.Sprintf("retry=%v", retry), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHeldCalls()
				defer h.close()
				hc := h.start(heldReq(), func(ctx context.Context, r *heldRequester) (*mcp.CallToolResult, error) {
					ctx, cancel := context.WithTimeout(ctx, time.Second) // the server's own patience
					defer cancel()
					_, err := withElicitation(r).Elicit(ctx, &mcp.ElicitParams{Message: "quick?"})
					return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprint("gave up: ", err)}}}, nil
				})
				ctx := context.Background()
				seal := func(key string) string { return key }
				res, asked, err := h.round(ctx, heldReq(), hc, seal)
				if !asked || err != nil {
					t.Fatalf("asked %v, %v", asked, err)
				}
				key := res.RequestState
				time.Sleep(2 * time.Second) // the call ends meanwhile
				synctest.Wait()
				got, seq := h.get(key)
				if !retry {
					if got == nil {
						t.Fatal("the outcome was dropped before the limit")
					}
					time.Sleep(h.limit)
					synctest.Wait()
					if got, _ := h.get(key); got != nil {
						t.Fatal("an ended call whose question was never answered is still held after the limit")
					}
					return
				}
				if got != hc {
					t.Fatal("the call that ended while asking is not found by its question's key: its outcome is lost")
				}
				if err := hc.answer(ctx, heldReq(), seq, &mcp.ElicitResult{Action: "accept"}); err != nil {
					t.Fatal(err)
				}
				res, asked, err = h.round(ctx, heldReq(), hc, seal)
				want := "gave up: context deadline exceeded"
				if err != nil || asked || len(res.Content) != 1 || res.Content[0].(*mcp.TextContent).Text != want {
					t.Fatalf("the retry: %+v, asked %v, %v; want %q", res, asked, err, want)
				}
				if got, _ := h.get(key); got != nil {
					t.Error("the call is still held after its outcome was collected")
				}
			})
		})
	}
}

// FuzzHeldForwarded: what arrives on a replica's forward channel from the
// shared state (a held call's retry or its cancellation, sealed, or
// anything a party with access to the state publishes) never panics, and
// nothing that does not open under the replica's key starts a round.
func FuzzHeldForwarded(f *testing.F) {
	keys := sealbox.Random()
	g := &Gateway{log: hclog.NewNullLogger(), replica: "0a1b2c", held: newHeldCalls(), calls: newInflight()}
	g.held.box = keys.Box(cluster.HeldForwardPurpose)
	reply := cluster.HeldReplyKey(strings.Repeat("ab", 16))
	for _, seed := range []string{
		cluster.ForwardHeld + " " + reply + "\n" + string(g.held.box.Seal(nil, []byte(`{"key":"x/1","answer":{}}`), heldAAD("held-retry", "ffff", reply))),
		cluster.ForwardHeldCancel + " " + reply + "\n" + string(g.held.box.Seal(nil, nil, heldAAD("held-cancel", g.replica, reply))),
		cluster.ForwardHeld + " " + reply + "\n\x00\xff{}",
		cluster.ForwardHeld + " held-reply:zz\n{}",
		cluster.ForwardAnswer + "\n{}", "held\n", "\n", "\x00\xff{}",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		g.forwarded(b)
		g.held.mu.Lock()
		n := len(g.held.rounds)
		g.held.mu.Unlock()
		if n != 0 {
			t.Fatalf("%q started a round", b)
		}
	})
}

// TestSamplingResult: a 2026-07-28 client's sampling answer, as go-sdk
// decodes it, reaches a server of an earlier version as the one-block
// result it asked for; an answer it cannot take is refused (-32602).
func TestSamplingResult(t *testing.T) {
	t.Parallel()
	hi := &mcp.TextContent{Text: "hi"}
	for _, tc := range []struct {
		name string
		in   mcp.InputResponse
		want *mcp.CreateMessageResult // nil: refused
	}{
		{"plain", &mcp.CreateMessageResult{Model: "m", Role: "assistant", Content: hi}, &mcp.CreateMessageResult{Model: "m", Role: "assistant", Content: hi}},
		{"with tools, one block", &mcp.CreateMessageWithToolsResult{Meta: mcp.Meta{"k": "v"}, Model: "m", Role: "assistant", Content: []mcp.Content{hi}, StopReason: "endTurn"},
			&mcp.CreateMessageResult{Meta: mcp.Meta{"k": "v"}, Model: "m", Role: "assistant", Content: hi, StopReason: "endTurn"}},
		{"with tools, an image", &mcp.CreateMessageWithToolsResult{Model: "m", Role: "assistant", Content: []mcp.Content{&mcp.ImageContent{MIMEType: "image/png", Data: []byte("x")}}},
			&mcp.CreateMessageResult{Model: "m", Role: "assistant", Content: &mcp.ImageContent{MIMEType: "image/png", Data: []byte("x")}}},
		{"with tools, audio", &mcp.CreateMessageWithToolsResult{Model: "m", Role: "assistant", Content: []mcp.Content{&mcp.AudioContent{MIMEType: "audio/wav", Data: []byte("x")}}},
			&mcp.CreateMessageResult{Model: "m", Role: "assistant", Content: &mcp.AudioContent{MIMEType: "audio/wav", Data: []byte("x")}}},
		{"with tools, tool_use", &mcp.CreateMessageWithToolsResult{Model: "m", Role: "assistant", Content: []mcp.Content{&mcp.ToolUseContent{ID: "1", Name: "t"}}, StopReason: "toolUse"}, nil},
		{"with tools, tool_result", &mcp.CreateMessageWithToolsResult{Model: "m", Role: "user", Content: []mcp.Content{&mcp.ToolResultContent{ToolUseID: "1"}}}, nil},
		{"with tools, two blocks", &mcp.CreateMessageWithToolsResult{Model: "m", Role: "assistant", Content: []mcp.Content{hi, hi}}, nil},
		{"with tools, none", &mcp.CreateMessageWithToolsResult{Model: "m", Role: "assistant"}, nil},
		{"another answer", &mcp.ElicitResult{Action: "accept"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := samplingResult(tc.in)
			if tc.want == nil {
				var rpc *jsonrpc.Error
				if !errors.As(err, &rpc) || rpc.Code != jsonrpc.CodeInvalidParams {
					t.Fatalf("got %v, %v; want -32602", got, err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}
