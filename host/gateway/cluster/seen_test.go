package cluster

import (
	"testing"
	"time"
)

// TestSeen: a sealed message's id is taken once; one without an id never.
func TestSeen(t *testing.T) {
	t.Parallel()
	var m Seen
	now := time.Now().UnixMilli()
	for _, tc := range []struct {
		name, id string
		want     bool
	}{
		{"a message", "a", true},
		{"the message again", "a", false},
		{"another message", "b", true},
		{"a message without an id", "", false},
	} {
		if got := m.First(tc.id, now); got != tc.want {
			t.Errorf("%s: taken %v, want %v", tc.name, got, tc.want)
		}
		if tc.id != "" && !m.Has(tc.id) {
			t.Errorf("%s: not remembered", tc.name)
		}
	}
}

// TestFresh: a message is fresh within MaxAge of now, either way.
func TestFresh(t *testing.T) {
	t.Parallel()
	now := time.Now()
	for _, tc := range []struct {
		name string
		at   time.Time
		want bool
	}{
		{"now", now, true},
		{"a little ago", now.Add(-MaxAge / 2), true},
		{"a little ahead (clocks differ)", now.Add(MaxAge / 2), true},
		{"long ago (replayed)", now.Add(-2 * MaxAge), false},
		{"far ahead", now.Add(2 * MaxAge), false},
	} {
		if got := Fresh(tc.at.UnixMilli()); got != tc.want {
			t.Errorf("%s: fresh %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestKeysDistinct: the keys and channels of the shared state do not
// collide with each other.
func TestKeysDistinct(t *testing.T) {
	t.Parallel()
	keys := []string{SessionKey("x"), AskRecordKey("x"), LoginKey("x", "y"), HeldReplyKey("x"), ForwardChannel("x"), SessionsChannel, TokensChannel}
	seen := map[string]bool{}
	for _, k := range keys {
		if seen[k] {
			t.Errorf("key %q used twice", k)
		}
		seen[k] = true
	}
	if !ValidHeldReplyKey(HeldReplyKey("0123456789abcdef0123456789abcdef")) || ValidHeldReplyKey(SessionKey("0123456789abcdef0123456789abcdef")) {
		t.Error("ValidHeldReplyKey does not tell a held reply's key")
	}
}
