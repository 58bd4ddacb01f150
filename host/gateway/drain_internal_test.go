package gateway

import "testing"

// TestInflightIdle: idle is closed while nothing is in flight, and a
// channel taken while requests are in flight closes when the last ends.
func TestInflightIdle(t *testing.T) {
	t.Parallel()
	closed := func(c <-chan struct{}) bool {
		select {
		case <-c:
			return true
		default:
			return false
		}
	}
	var f inflight
	if !closed(f.idle()) {
		t.Fatal("idle not closed with nothing in flight")
	}
	f.add()
	f.add()
	c := f.idle()
	if closed(c) {
		t.Fatal("idle closed with two requests in flight")
	}
	f.done()
	if closed(c) || closed(f.idle()) {
		t.Fatal("idle closed with one request in flight")
	}
	f.done()
	if !closed(c) || !closed(f.idle()) {
		t.Fatal("idle not closed once the last request ended")
	}
	f.add()
	if closed(f.idle()) {
		t.Fatal("idle closed with a request in flight again")
	}
}
