package conn

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	hauth "github.com/mcphost/mcphost/host/auth"
)

// User is the gateway user a request is made for (mcphost serve --http with
// gateway { oauth }). A server whose credentials are per user
// (config.Server.PerUser) is reached, for each user, through a connection
// of that user's own: its own session, its own tokens.
type User struct {
	// Issuer and Subject identify the user.
	Issuer, Subject string
	// Groups are the user's groups (told to auth plugins).
	Groups []string
	// Token is the user's inbound access token: exchanged for a server's
	// token (oauth { grant = "token_exchange" }) or given to an auth plugin
	// that asks for it (inbound_token); never sent to a server as it is,
	// never logged.
	Token string
}

// ID is a stable, opaque identifier of the user (a hash of issuer and
// subject), for store keys and logs.
func (u *User) ID() string {
	sum := sha256.Sum256([]byte(u.Issuer + "\x00" + u.Subject))
	return hex.EncodeToString(sum[:12])
}

type userKey struct{}

// WithUser returns ctx carrying the gateway user u: the Manager's methods
// then use u's own connection of every per-user server.
func WithUser(ctx context.Context, u *User) context.Context {
	if u == nil {
		return ctx
	}
	return context.WithValue(ctx, userKey{}, u)
}

// WithoutUser returns ctx carrying no gateway user: for work of the host's
// own (lists shared by all) done while serving a user's request.
func WithoutUser(ctx context.Context) context.Context {
	if UserOf(ctx) == nil {
		return ctx
	}
	return context.WithValue(ctx, userKey{}, (*User)(nil))
}

// UserOf returns the gateway user ctx carries, or nil (the host's own).
func UserOf(ctx context.Context) *User {
	u, _ := ctx.Value(userKey{}).(*User)
	return u
}

// Bounds of the per-user connections.
const (
	// DefaultMaxUserConns caps the per-user connections held at once (of
	// all servers); beyond it the least recently used idle one is closed.
	DefaultMaxUserConns = 1024
	// UserConnIdle is how long a per-user connection is kept unused before
	// it is closed.
	UserConnIdle = 15 * time.Minute
)

// userConn is the state of a per-user connection.
type userConn struct {
	id   string       // User.ID
	mu   sync.Mutex   // guards u
	u    *User        // the latest User seen (its token is the newest)
	used atomic.Int64 // unix nanoseconds of the last use
}

// user returns the latest User of a per-user connection.
func (uc *userConn) user() *User {
	uc.mu.Lock()
	defer uc.mu.Unlock()
	return uc.u
}

// subjectToken is the user's latest inbound token and its issuer (for a
// token exchange).
func (uc *userConn) subjectToken() (token, issuer string) {
	u := uc.user()
	return u.Token, u.Issuer
}

// users holds the per-user connections of a Manager.
type users struct {
	mu    sync.Mutex
	conns map[string]*Conn // server + "\x00" + User.ID
	max   int
	reap  sync.Once
}

// conn returns the connection a request of ctx uses for the server whose
// own connection is c: c itself, unless the server is per user and ctx
// carries a user (WithUser), whose connection it returns (made on first
// use, and given the user's newest token).
func (m *Manager) conn(ctx context.Context, c *Conn) *Conn {
	if c == nil || !c.cfg.PerUser() {
		return c
	}
	u := UserOf(ctx)
	if u == nil {
		return c
	}
	c.mu.Lock()
	disabled := c.state == StateDisabled
	c.mu.Unlock()
	if disabled {
		return c // blocked, disabled or not approved: for everyone
	}
	id := u.ID()
	key := c.cfg.Name + "\x00" + id
	m.users.mu.Lock()
	if c.retired.Load() {
		// Its server was removed or replaced (Manager.Apply): the request
		// meets ErrRetired on c, before anything is sent, and goes to the
		// server's current connection.
		m.users.mu.Unlock()
		return c
	}
	uc := m.users.conns[key]
	if uc == nil {
		m.evictLocked()
		uc = &Conn{m: m, cfg: c.cfg, log: c.log.With("user", id), version: c.version, calls: make(chan struct{}, cap(c.calls)),
			user: &userConn{id: id, u: u}, plug: c.plug, live: c.live}
		if m.users.conns == nil {
			m.users.conns = map[string]*Conn{}
		}
		m.users.conns[key] = uc
	}
	uc.user.used.Store(time.Now().UnixNano()) // (under users.mu: never evicted as stale)
	m.users.mu.Unlock()
	m.users.reap.Do(func() {
		m.wg.Add(1)
		go m.reapUsers()
	})
	uc.user.mu.Lock()
	if uc.user.u.Token != u.Token || !slices.Equal(uc.user.u.Groups, u.Groups) {
		uc.user.u = u
	}
	uc.user.mu.Unlock()
	return uc
}

// evictLocked makes room for one more per-user connection: the least
// recently used one with no request in flight is closed. With every one
// busy, none is (the cap is exceeded until some are idle).
func (m *Manager) evictLocked() {
	if len(m.users.conns) < m.users.max {
		return
	}
	var (
		oldKey string
		old    *Conn
	)
	for k, c := range m.users.conns {
		if len(c.calls) > 0 {
			continue
		}
		if old == nil || c.user.used.Load() < old.user.used.Load() {
			oldKey, old = k, c
		}
	}
	if old != nil {
		delete(m.users.conns, oldKey)
		m.retire(old)
	}
}

// retire closes a per-user connection for good (in the background: a
// session's close may wait on the network).
func (m *Manager) retire(c *Conn) {
	c.retired.Store(true)
	// Its user's lists are gone with it, before anything else: a new
	// connection of the user starts its generations again.
	c.listChanged(ToolsChanged)
	c.listChanged(PromptsChanged)
	c.listChanged(ResourcesChanged)
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		c.close()
	}()
}

// reapUsers closes the per-user connections unused for UserConnIdle.
func (m *Manager) reapUsers() {
	defer m.wg.Done()
	t := time.NewTicker(UserConnIdle / 4)
	defer t.Stop()
	for {
		select {
		case <-m.ctx.Done():
			return
		case <-t.C:
		}
		cutoff := time.Now().Add(-UserConnIdle).UnixNano()
		m.users.mu.Lock()
		for k, c := range m.users.conns {
			if len(c.calls) == 0 && c.user.used.Load() < cutoff {
				delete(m.users.conns, k)
				m.retire(c)
			}
		}
		m.users.mu.Unlock()
	}
}

// userCounts returns the number of per-user connections of each server.
func (m *Manager) userCounts() map[string]int {
	m.users.mu.Lock()
	defer m.users.mu.Unlock()
	n := make(map[string]int)
	for _, c := range m.users.conns {
		n[c.cfg.Name]++
	}
	return n
}

// userConns returns the per-user connections of server (all servers for "").
func (m *Manager) userConns(server string) []*Conn {
	m.users.mu.Lock()
	defer m.users.mu.Unlock()
	var out []*Conn
	for _, c := range m.users.conns {
		if server == "" || c.cfg.Name == server {
			out = append(out, c)
		}
	}
	return out
}

// For returns the connection a request of ctx uses for server (see
// WithUser): the server's own, or ctx's user's. Nil for an unknown server.
func (m *Manager) For(ctx context.Context, server string) *Conn {
	return m.conn(ctx, m.Get(server))
}

// User returns the gateway user of a per-user connection, nil for a
// server's own connection.
func (c *Conn) User() *User {
	if c.user == nil {
		return nil
	}
	return c.user.user()
}

// storeKey is the token store key of the connection's credentials: the
// server's, and for a per-user connection its user's.
func (c *Conn) storeKey() string {
	k := hauth.Key(c.cfg.Name, c.cfg.ConfigHash())
	if c.user != nil {
		k += "@" + c.user.id
	}
	return k
}

// Sessions returns the live sessions of server: its own connection's and
// those of its per-user connections.
func (m *Manager) Sessions(server string) []*mcp.ClientSession {
	var out []*mcp.ClientSession
	cs := append([]*Conn{m.Get(server)}, m.userConns(server)...)
	for _, c := range cs {
		if c == nil {
			continue
		}
		c.mu.Lock()
		if c.session != nil {
			out = append(out, c.session)
		}
		c.mu.Unlock()
	}
	return out
}
