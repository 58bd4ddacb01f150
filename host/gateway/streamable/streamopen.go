package streamable

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A 2025-11-25 client's resource updates reach it on its standalone stream
// (GET). While no such stream is open — it dropped, or the replica holding
// it went away and the client has not opened it again elsewhere yet — the
// go-sdk has nowhere to deliver an update and drops it (the gateway keeps
// no event store: a replica's events could not be replayed by another).
// So that no update is lost silently, a standalone stream opened for a
// session that already has subscriptions starts with one
// notifications/resources/updated for each resource subscribed to (and not
// refused or denied to the session's principal here): the resource may have changed meanwhile, and the client
// reads it again, as for any update. A first stream, opened before any
// subscription, starts with none. On a replica that has just rebuilt the
// session, its subscriptions are being replayed (subscribed upstream
// here): the stream waits for that, up to streamOpenReplayWait, so that
// the client's reads follow the replica's subscription and an update
// after them is not missed.

// streamOpenReplayWait bounds how long a standalone stream waits for its
// session's subscriptions to be replayed before it opens.
const streamOpenReplayWait = 5 * time.Second

// updatedOnOpen wraps w, the response to hs's standalone stream request,
// so that the stream starts with an update of each of hs's subscriptions;
// w itself when hs has none.
func (s *httpSessions) updatedOnOpen(ctx context.Context, w http.ResponseWriter, hs *httpSession) http.ResponseWriter {
	s.mu.Lock()
	subscribed := len(hs.subs) > 0
	s.mu.Unlock()
	if !subscribed {
		return w
	}
	s.awaitSync(ctx, hs, streamOpenReplayWait)
	s.mu.Lock()
	var uris []string
	for uri := range hs.subs {
		if !hs.refused[uri] {
			uris = append(uris, uri)
		}
	}
	p := hs.principal
	s.mu.Unlock()
	if len(uris) == 0 {
		return w
	}
	slices.Sort(uris)
	var events []byte
	for _, uri := range uris {
		if denied, _ := s.f.gw.SubscriptionDenied(p, uri); denied {
			continue // (as revokedUpdates: none for a resource denied to p here)
		}
		params, err := json.Marshal(&mcp.ResourceUpdatedNotificationParams{URI: uri})
		if err != nil {
			continue
		}
		msg, err := jsonrpc.EncodeMessage(&jsonrpc.Request{Method: "notifications/resources/updated", Params: params})
		if err != nil {
			continue
		}
		events = append(events, "event: message\ndata: "...)
		events = append(events, msg...)
		events = append(events, "\n\n"...)
	}
	return &openedStream{ResponseWriter: w, events: events}
}

// openedStream is the response of a standalone stream that starts with
// events of the gateway's. The go-sdk flushes a standalone stream's
// headers (and a comment) as it opens it, while it holds the stream, before
// it delivers anything on it or replays events: the events are written at
// that first flush, so they precede whatever the go-sdk sends on the
// stream and never interleave with it.
type openedStream struct {
	http.ResponseWriter
	events []byte // written at the first flush, then nil
}

// FlushError writes the events at the first flush, then flushes.
func (o *openedStream) FlushError() error {
	if o.events != nil {
		events := o.events
		o.events = nil
		if _, err := o.ResponseWriter.Write(events); err != nil {
			return err
		}
	}
	return http.NewResponseController(o.ResponseWriter).Flush()
}

// Flush is FlushError for an http.Flusher.
func (o *openedStream) Flush() { _ = o.FlushError() }

// Unwrap lets http.ResponseController reach the connection's writer.
func (o *openedStream) Unwrap() http.ResponseWriter { return o.ResponseWriter }
