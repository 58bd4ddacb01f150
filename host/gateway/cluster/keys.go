package cluster

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/mcphost/mcphost/host/state"
)

// Every key and channel of the shared state the gateway uses. A backend
// prefixes them (state { key_prefix }); the values are sealed with a key
// derived from MCPHOST_SESSION_KEYS for the purpose named with each, so a
// reader of the shared state sees no session id, answer or login.

// Channels.
const (
	// SessionsChannel carries the changes of sessions (a log level set, a
	// subscription, an end, a cancellation) and the notifications for a
	// session's standalone stream held elsewhere (a task's status) to
	// every replica; sealed for
	// ForwardPurpose (streamable/sessions.go).
	SessionsChannel = "sessions"
	// TokensChannel carries the key of every credential record a login
	// saved, so that a call waiting for that login on another replica
	// goes on (host/state; the gateway's loginshared.go).
	TokensChannel = state.TokensChannel
)

// ForwardChannel is the channel of replica rid: what other replicas pass
// on to it, one message a publish, "KIND ID\n" then the sealed body. Kinds:
// ForwardAnswer (a client's answer to a request rid put to it;
// streamable/forward.go), ForwardHeld and ForwardHeldCancel (a held call's
// retry, and its cancellation; heldforward.go).
func ForwardChannel(rid string) string { return "fwd:" + rid }

// The kinds of message on a replica's ForwardChannel.
const (
	ForwardAnswer     = "answer"
	ForwardHeld       = "held"
	ForwardHeldCancel = "heldcancel"
)

// SessionKey is the record of a session of the streamable-HTTP front
// (sess:SID, SID the random id sealed in the session's id): its log level,
// subscriptions, last use; it expires after the idle timeout and a
// quarter (streamable/sessions.go).
func SessionKey(sid string) string { return "sess:" + sid }

// SessionStreamKey names the replica holding the standalone stream (GET)
// of session SID (sess:SID:get), while one is open, so that a replica
// without it knows whether one is open elsewhere (streamable/tasknotes.go).
// Its value is the replica's id, not sealed (no session id, answer or
// login); it expires as the session's record does.
func SessionStreamKey(sid string) string { return "sget:" + sid }

// SessionAAD is the additional data a session id of the gateway that
// serves endpoint ("": the whole gateway, /mcp) is sealed with: an id
// opens only at the endpoint it was issued at, so that a session of
// /mcp/dev is never taken up as a session of /mcp (or of another
// endpoint), which serves more. /mcp's is SessionPurpose, as before
// endpoints.
func SessionAAD(endpoint string) []byte {
	if endpoint == "" {
		return []byte(SessionPurpose)
	}
	return []byte(SessionPurpose + "@" + endpoint)
}

// AskRecordKey is the record of the go-sdk requests a replica has out to
// a session's client (ask:SID), sealed for ForwardPurpose
// (streamable/forward.go).
func AskRecordKey(sid string) string { return "ask:" + sid }

// LoginKey is the record of a login started through an authenticate
// pseudo-tool, for login id (a server and a user) and its nonce: a digest,
// so no principal id is stored in clear (loginshared.go).
func LoginKey(id, nonce string) string {
	sum := sha256.Sum256([]byte(id + "\x00" + nonce))
	return "login:" + hex.EncodeToString(sum[:16])
}

// HeldReplyPrefix starts the key of the list a held call's round's replies
// are pushed to (held-reply:RANDOM, 32 hex digits), by the replica holding
// the call for the replica that passed the retry on (heldforward.go).
const HeldReplyPrefix = "held-reply:"

// HeldReplyKey is the key of a round's replies for random (hex).
func HeldReplyKey(random string) string { return HeldReplyPrefix + random }

// ValidHeldReplyKey reports whether k can be a HeldReplyKey.
func ValidHeldReplyKey(k string) bool {
	rest, ok := strings.CutPrefix(k, HeldReplyPrefix)
	return ok && len(rest) == 32 && ValidReplica(rest)
}

// ValidReplica reports whether rid can be a replica's id (hex, at most 64
// digits: a channel name's part).
func ValidReplica(rid string) bool {
	if rid == "" || len(rid) > 64 {
		return false
	}
	_, err := hex.DecodeString(rid)
	return err == nil
}

// The rate limiter's counts (gateway { rate_limit }) are the shared
// state's own (state.Backend.RateLimiter "gateway"), keyed by a MAC of the
// principal (RateLimitPurpose); a principal's notifications are counted
// under NotificationsKey of its key.

// NotificationsKey is the rate limiter's key of the notifications of the
// principal whose key is key.
func NotificationsKey(key string) string { return key + "\x00notifications" }

// The purposes of the keys derived from MCPHOST_SESSION_KEYS
// (sealbox.Keys.Box, MACKeys).
const (
	// SessionPurpose seals the session ids of clients before 2026-07-28.
	SessionPurpose = "mcp-session"
	// ForwardPurpose seals what replicas pass each other about sessions:
	// clients' answers, session changes, ask records.
	ForwardPurpose = "session-forward"
	// AskIDPurpose keys the tags of the ids of the requests relayed calls
	// put to clients.
	AskIDPurpose = "ask-id"
	// HeldForwardPurpose seals the retries and replies of held calls
	// passed between replicas.
	HeldForwardPurpose = "held-forward"
	// RequestStatePurpose keys the request states the gateway issues
	// (2026-07-28 held calls and asks).
	RequestStatePurpose = "request-state"
	// RateLimitPurpose keys the rate limiter's principal keys.
	RateLimitPurpose = "rate-limit"
	// TaskIDPurpose keys the task ids the gateway gives its clients (a
	// MAC binding server, upstream task id and principal; tasks.go): no
	// key of the shared state, replicas given the same keys open each
	// other's task ids.
	TaskIDPurpose = "task-id"
	// TaskListPurpose seals a principal's record of its 2025-11-25 tasks
	// (TasksKey).
	TaskListPurpose = "task-list"
)

// TasksKey is the record of the 2025-11-25 tasks the gateway named for a
// principal (tasks:DIGEST, a digest of the principal's id, so no principal
// id is stored in clear): each task's server, protocol version and
// upstream id, its latest 1024, sealed for TaskListPurpose; it
// expires a day after its latest task. It lets tasks/list on any replica
// list the tasks created through another (the gateway's tasks.go).
func TasksKey(principal string) string {
	sum := sha256.Sum256([]byte("tasks\x00" + principal))
	return "tasks:" + hex.EncodeToString(sum[:16])
}
