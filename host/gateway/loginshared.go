package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/mcphost/mcphost/host/gateway/cluster"
	"github.com/mcphost/mcphost/host/state"
)

// A login started through an authenticate pseudo-tool runs on the replica
// whose request started it (its callback, its flow); the client's retry,
// which waits for it, may reach another replica. So each login is recorded
// in the shared state, pending and then ended, under its nonce (a retry
// finds its own login's record, not another of the same user's), and a
// replica that gets a retry for a login it does not run waits for the
// record to say how it ended; the credentials are in the shared token
// store by then. A pending record lives loginPendingTTL, renewed while the
// login runs: when the replica running it stops, the record goes soon, and
// the retry waiting for it says that the login was lost.

// Life of a login record.
const (
	// loginLinger is how long an ended login is kept for retries: its
	// record, and its entry on the replica that ran it.
	loginLinger = 5 * time.Minute
	// loginPendingTTL is the life of a pending login's record, renewed
	// every loginRenewEvery while the login runs.
	loginPendingTTL = 30 * time.Second
	loginRenewEvery = loginPendingTTL / 3
	// loginPollMin and loginPollMax bound the interval at which a replica
	// reads the record of a login another replica runs.
	loginPollMin = 100 * time.Millisecond
	loginPollMax = time.Second
	// loginRecordTimeout bounds the writing of a record.
	loginRecordTimeout = 5 * time.Second
)

// Login record states.
const (
	loginPending = "pending"
	loginEnded   = "ended"
)

// loginRecord is a login's record in the shared state.
type loginRecord struct {
	By    string `json:"by"`              // the replica running it
	Nonce string `json:"nonce"`           // the login's (pendingLogin.nonce)
	State string `json:"state"`           // loginPending or loginEnded
	Error string `json:"error,omitempty"` // how it failed (ended)
}

// recordLogin writes the login's record; a failure is logged (the retry
// reaching another replica then fails, not the login).
func (g *Gateway) recordLogin(ctx context.Context, p *pendingLogin, st string, err error) {
	rec := loginRecord{By: g.replica, Nonce: p.nonce, State: st}
	ttl := loginPendingTTL
	if st == loginEnded {
		ttl = loginLinger
		if err != nil {
			rec.Error = err.Error()
			if rec.Error == "" {
				rec.Error = "failed"
			}
		}
	}
	b, _ := json.Marshal(rec)
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), loginRecordTimeout)
	defer cancel()
	if perr := g.state.Put(pctx, cluster.LoginKey(p.id, p.nonce), b, ttl); perr != nil {
		g.log.Warn("recording a login in the shared state failed: a retry reaching another replica will not find it", "state", st, "error", perr)
	}
}

// renewPendingLogin keeps p's pending record alive while p runs: it writes
// it again every loginRenewEvery until ctx (the login's) ends or the
// returned function is called, which returns once it writes no more.
func (g *Gateway) renewPendingLogin(ctx context.Context, p *pendingLogin) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(loginRenewEvery)
		defer t.Stop()
		for {
			select {
			case <-t.C:
			case <-ctx.Done():
				return
			}
			g.recordLogin(ctx, p, loginPending, nil)
		}
	}()
	return func() {
		cancel()
		<-done
	}
}

// awaitSharedLogin waits for the login of id (ctx's caller's to server)
// with nonce that another replica runs, and returns how it ended (nil:
// logged in). A pending record that disappears is a login lost with the
// replica that ran it.
func (g *Gateway) awaitSharedLogin(ctx context.Context, id, nonce, server, tool string) error {
	key := cluster.LoginKey(id, nonce)
	wait := loginPollMin
	pending := false // its record was seen pending
	for {
		b, err := g.state.Get(ctx, key)
		var rec loginRecord
		switch {
		case errors.Is(err, state.ErrNotFound) && pending:
			return fmt.Errorf("the login to %s was lost: the gateway replica running it stopped; call %s again to log in", server, tool)
		case errors.Is(err, state.ErrNotFound):
			return fmt.Errorf("no login to %s is in progress (it ended long ago, or the gateway replica running it stopped); call %s again", server, tool)
		case err != nil:
			return fmt.Errorf("logging in to %s: the login runs on another replica, whose record is unreachable: %w", server, err)
		case json.Unmarshal(b, &rec) != nil || rec.Nonce != nonce:
			return fmt.Errorf("logging in to %s: the login's record is unreadable; call %s again", server, tool)
		case rec.State == loginEnded && rec.Error != "":
			return fmt.Errorf("logging in to %s: %s", server, rec.Error)
		case rec.State == loginEnded:
			return nil
		}
		pending = true
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		}
		wait = min(2*wait, loginPollMax)
	}
}

// credentialsStored is told the token store key of each record saved by
// any process sharing the state (state.AnnouncedTokens): the connections
// waiting for that login connect again on their next use.
func (g *Gateway) credentialsStored(msg []byte) {
	if msg != nil { // (nil: messages may have been lost; a waiting connection tries again in time)
		g.h.Serving().CredentialsStored(string(msg))
	}
}
