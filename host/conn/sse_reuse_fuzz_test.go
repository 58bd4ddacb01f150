package conn

import (
	"bytes"
	"io"
	"slices"
	"strings"
	"testing"
	"time"
)

// sseRun is what a router made of a stream: the data it routed, the bytes
// it passed on, and what it recorded for a resume.
type sseRun struct {
	routed   []string
	out      []byte
	lastID   string
	retry    time.Duration
	overflow bool
}

// runSSE reads body through r to its end (or until it overflows), r
// routing with route; calls is where route records the data it was given.
func runSSE(r *sseRouter, calls *[]string) sseRun {
	var out []byte
	buf := make([]byte, 7) // (small reads: Read's bookkeeping is exercised)
	for {
		n, err := r.Read(buf)
		out = append(out, buf[:n]...)
		if err != nil || r.overflow {
			break
		}
	}
	return sseRun{routed: slices.Clone(*calls), out: out, lastID: r.lastID, retry: r.retry, overflow: r.overflow}
}

// FuzzReusedSSERouter: a router reused from the raw lane's pool (sseRouters)
// after reading one stream, to its end or only partly, reads a second stream
// exactly as a new router does: the same data routed, the same bytes passed
// on, the same resume state — nothing of the first stream carries over.
func FuzzReusedSSERouter(f *testing.F) {
	for _, seed := range [][2]string{
		{"id: 1\nretry: 50\nevent: other\ndata: {\"a\":1}\n\n", "data: {\"b\":2}\n\n"},
		{"data: " + strings.Repeat("x", 200) + "\n", "data: {}\n\n"}, // the first ends mid-event
		{"data: " + strings.Repeat("y", fuzzMaxEvent+10) + "\n\n", "event: message\ndata: {\"c\":3}\nid: 7\n\n"},
		{"event: message\r\ndata: a\r\ndata: b\r\n\r\n", "\n\n: comment\n\ndata:x\n\n"},
		{"", "id: 2\n\n"},
	} {
		f.Add([]byte(seed[0]), []byte(seed[1]), 3)
	}
	f.Fuzz(func(t *testing.T, first, second []byte, cut int) {
		var calls []string
		route := func(data []byte) []byte {
			calls = append(calls, string(data))
			if bytes.HasPrefix(data, []byte("{")) {
				return []byte(`{"routed":true}`) // (a replaced event: fields and data rewritten)
			}
			return nil
		}
		fresh := newSSERouter(io.NopCloser(bytes.NewReader(second)), fuzzMaxEvent, route)
		want := runSSE(fresh, &calls)

		// The router is recycled and reused by hand, as sseRouters.put and
		// get do (a sync.Pool may drop what it is given, so going through
		// one would not always test reuse).
		var p sseRouters
		r := p.get(fuzzMaxEvent, route)
		r.restart(io.NopCloser(bytes.NewReader(first)))
		if cut = max(cut, 0) % 4; cut == 0 {
			runSSE(r, &calls) // the first stream to its end
		} else {
			for range cut { // or a few reads of it only
				if r.skip() != nil {
					break
				}
			}
		}
		r.recycle()
		r.reuse(fuzzMaxEvent, route)
		calls = nil
		r.restart(io.NopCloser(bytes.NewReader(second)))
		got := runSSE(r, &calls)
		if !slices.Equal(got.routed, want.routed) || !bytes.Equal(got.out, want.out) || got.lastID != want.lastID || got.retry != want.retry || got.overflow != want.overflow {
			t.Fatalf("a reused router read %q as\n%+v\nwant (a new router)\n%+v", second, got, want)
		}
	})
}
