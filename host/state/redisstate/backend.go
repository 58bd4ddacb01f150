// Package redisstate is the state.Backend that the gateway's replicas share:
// a Redis server (or Valkey: only commands both have are used, and Lua
// scripts, none newer than Redis 6.2), reached with go-redis.
//
// # Keys
//
// Every key starts with Options.KeyPrefix ("mcphost:" by default), so that
// an ACL user confined to ~PREFIX* and &PREFIX* is all the gateway needs:
//
//	PREFIX kv:<key>          Put / PutNew / Get values (PX ttl)
//	PREFIX list:<key>        Push / Pop lists (PEXPIRE ttl at each push)
//	PREFIX lease:<key>       leases: a random holder token (SET NX PX)
//	PREFIX tok:<key>         OAuth token records, sealed (no TTL)
//	PREFIX rl:<name>:<key>   a rate limiter's state for one key (ZSET;
//	                         expires once idle)
//	PREFIX pinset            tool pins, sealed (no TTL; see pins)
//	PREFIX pins              tool pins of the former format (HASH name →
//	                         fingerprint), read once into pinset
//	PREFIX ch:<channel>      Pub/Sub channels
//
// Token records are sealed with Options.TokenBox, bound to their full key,
// so neither Redis nor whoever reads its memory, backups or traffic sees a
// token, and a record copied under another key does not open.
//
// # Connections
//
// Every call but Pop takes a connection of one go-redis pool, sized by the
// URL's pool_size (go-redis's default: 10 per GOMAXPROCS). Pop waits in
// BLPOPs, each holding its connection for its whole wait: Pops have a
// client, and a pool, of their own (Options.PopPoolSize), so that however
// many Pops wait, they never take a connection from the other calls
// (session records, leases, rate limits, tokens). Pub/Sub has a client of
// its own too (one connection).
//
// # Failures
//
// Every call is bounded by Options.DialTimeout and Options.Timeout (and by
// its context's deadline): when Redis is away, calls fail within those
// bounds instead of hanging. Errors never quote keys or values (a key may
// hold a session id) nor the password.
package redisstate

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/mcphost/mcphost/host/auth"
	"github.com/mcphost/mcphost/host/state"
	"github.com/mcphost/mcphost/internal/sealbox"
)

// Defaults of Options.
const (
	DefaultKeyPrefix      = "mcphost:"
	DefaultDialTimeout    = 2 * time.Second
	DefaultTimeout        = 2 * time.Second
	DefaultInFlightExpiry = 5 * time.Minute
	DefaultPopPoolSize    = 256
)

// popSlice is the longest BLPOP that Pop sends: a Pop longer than that is
// several BLPOPs, so that a cancelled context is noticed within popSlice
// (a context's deadline is honoured exactly).
const popSlice = 250 * time.Millisecond

// Options configures New.
type Options struct {
	// URL locates the server: redis://[user:password@]host:port[/db], or
	// rediss://… for TLS. Query parameters are go-redis's (redis.ParseURL),
	// except skip_verify, which is refused. REQUIRED.
	URL string
	// KeyPrefix starts every key and channel. OPTIONAL: DefaultKeyPrefix.
	KeyPrefix string
	// CAFile is a PEM file of the CAs that may sign the server's
	// certificate, instead of the system's. OPTIONAL; needs rediss://.
	CAFile string
	// CertFile and KeyFile are the PEM client certificate and key
	// presented for mutual TLS. OPTIONAL (both or neither); need rediss://.
	CertFile, KeyFile string
	// TokenBox seals the OAuth token records. REQUIRED.
	TokenBox *sealbox.Box
	// PinBox seals the tool pins (a box of another purpose than
	// TokenBox's). REQUIRED.
	PinBox *sealbox.Box
	// Logger receives what the backend has to say (lost connections,
	// leases it could not release). OPTIONAL: nothing is logged.
	Logger hclog.Logger
	// DialTimeout bounds the making of one connection. OPTIONAL: the URL's
	// dial_timeout, else DefaultDialTimeout.
	DialTimeout time.Duration
	// Timeout bounds one command's write and read. OPTIONAL: the URL's
	// read_timeout, else DefaultTimeout.
	Timeout time.Duration
	// InFlightExpiry is how long a request admitted by a rate limiter with
	// a concurrency limit counts as in flight if its release never comes (a
	// replica that died mid-request): a request that runs longer stops
	// counting after it. OPTIONAL: DefaultInFlightExpiry.
	InFlightExpiry time.Duration
	// PopPoolSize is how many Pops may wait at once: each holds a
	// connection of a pool of their own for its wait (never one of the
	// pool of every other call, which the URL's pool_size sizes). A Pop
	// beyond them waits for a connection as long as the URL's pool_timeout
	// (go-redis's default: Timeout + 1s), then fails. The connections are
	// made as Pops need them and closed after a minute idle. OPTIONAL:
	// DefaultPopPoolSize.
	PopPoolSize int
	// MaxReplyBytes caps one reply: a value longer than that (or a reply
	// announcing it, or announcing more than 131,072 elements) fails its
	// call with ErrReplyTooLarge and closes the connection before anything
	// of the announced size is allocated, so that a hostile server, or one
	// in the middle of a redis:// connection, cannot make the replica
	// allocate gigabytes with a few bytes. It must exceed the largest value
	// the gateway stores (a held reply: a server's message, up to the
	// max_message_bytes setting). It bounds go-redis's memory per reply
	// only roughly: the values go-redis makes of a reply (strings, slices,
	// maps) may take 5 to 10 times its bytes, on each connection reading
	// one at once (the pools' sizes). OPTIONAL: DefaultMaxReplyBytes.
	MaxReplyBytes int64
}

// Backend is the state in Redis. Its methods are safe for concurrent use.
type Backend struct {
	rdb            *redis.Client // every call's but Pop's and Pub/Sub's
	pops           *redis.Client // Pop's (Options.PopPoolSize)
	prefix         string
	box            *sealbox.Box
	pinBox         *sealbox.Box
	pinMem         pinMemory // the newest tool pins seen
	log            hclog.Logger
	opTimeout      time.Duration // of a call without a context
	inFlightExpiry time.Duration
	popSlice       time.Duration
	ps             *pubsub

	idPrefix string        // tells this backend's request ids apart
	ids      atomic.Uint64 // request ids
	closed   sync.Once
}

var _ state.Backend = (*Backend)(nil)

// New connects to the server and checks that it answers. Its errors never
// contain the password.
func New(ctx context.Context, o Options) (*Backend, error) {
	secrets := urlSecrets(o.URL)
	b, err := newBackend(o)
	if err != nil {
		return nil, scrub(err, secrets)
	}
	if err := b.rdb.Ping(ctx).Err(); err != nil {
		b.Close()
		return nil, scrub(fmt.Errorf("redis state: connecting to %s: %w", b.rdb.Options().Addr, err), secrets)
	}
	return b, nil
}

func newBackend(o Options) (*Backend, error) {
	switch {
	case o.URL == "":
		return nil, errors.New("redis state: no URL")
	case o.TokenBox == nil:
		return nil, errors.New("redis state: no key to seal tokens with")
	case o.PinBox == nil:
		return nil, errors.New("redis state: no key to seal tool pins with")
	case o.DialTimeout < 0 || o.Timeout < 0 || o.InFlightExpiry < 0:
		return nil, errors.New("redis state: a negative timeout")
	case o.PopPoolSize < 0:
		return nil, errors.New("redis state: a negative pool size for Pop")
	case o.MaxReplyBytes < 0:
		return nil, errors.New("redis state: a negative reply size limit")
	}
	b := &Backend{
		prefix:         o.KeyPrefix,
		box:            o.TokenBox,
		pinBox:         o.PinBox,
		log:            o.Logger,
		inFlightExpiry: o.InFlightExpiry,
		idPrefix:       rand.Text()[:12] + ":",
	}
	if b.prefix == "" {
		b.prefix = DefaultKeyPrefix
	}
	if b.log == nil {
		b.log = hclog.NewNullLogger()
	}
	if b.inFlightExpiry == 0 {
		b.inFlightExpiry = DefaultInFlightExpiry
	}
	ro, err := clientOptions(o)
	if err != nil {
		return nil, err
	}
	b.opTimeout = ro.DialTimeout + 2*ro.ReadTimeout
	b.popSlice = min(popSlice, ro.ReadTimeout/2)
	b.rdb = redis.NewClient(ro)
	// Pops have a client of their own: a BLPOP holds its connection for
	// its whole wait, and Pops waiting must not leave the other calls
	// without connections.
	pop, err := clientOptions(o)
	if err != nil {
		b.rdb.Close()
		return nil, err
	}
	pop.PoolSize = cmp.Or(o.PopPoolSize, DefaultPopPoolSize)
	pop.MinIdleConns, pop.MaxIdleConns, pop.MaxActiveConns = 0, 0, 0
	pop.ConnMaxIdleTime = time.Minute // (a burst of waits does not leave its connections open)
	pop.PipelinePoolSize = -1         // (no pipelines)
	b.pops = redis.NewClient(pop)
	// The Pub/Sub connection has a client of its own, whose connections
	// are counted: a new one means the previous one was lost.
	po, err := clientOptions(o)
	if err != nil {
		b.rdb.Close()
		b.pops.Close()
		return nil, err
	}
	b.ps = newPubsub(b, po)
	setLibraryLogger(&b.log)
	return b, nil
}

// clientOptions returns go-redis's options for o.
func clientOptions(o Options) (*redis.Options, error) {
	if _, err := url.Parse(o.URL); err != nil {
		// url.Parse's error quotes the URL, password and all.
		return nil, errors.New("redis state: the URL does not parse: want redis://[user:password@]host:port[/db] or rediss://…")
	}
	ro, err := redis.ParseURL(o.URL)
	if err != nil {
		return nil, fmt.Errorf("redis state: the URL: %w", err)
	}
	if err := setTLS(ro, o); err != nil {
		return nil, err
	}
	if o.DialTimeout > 0 || ro.DialTimeout == 0 {
		ro.DialTimeout = cmp.Or(o.DialTimeout, DefaultDialTimeout)
	}
	if o.Timeout > 0 || ro.ReadTimeout == 0 {
		ro.ReadTimeout = cmp.Or(o.Timeout, DefaultTimeout)
		ro.WriteTimeout = ro.ReadTimeout
	}
	if ro.DialTimeout < 0 || ro.ReadTimeout < 0 || ro.WriteTimeout < 0 {
		return nil, errors.New("redis state: the URL disables a timeout: a dead server would hang every request")
	}
	if ro.MaxRetries == 0 {
		// A command is sent once: a retry after a lost reply could push,
		// publish or count twice, or find its own lease held. (go-redis
		// checks a pooled connection before using it, so one that Redis
		// closed, as in a restart, costs no error.)
		ro.MaxRetries = -1
	}
	ro.DialerRetries = 1
	ro.Dialer = capDialer(redis.NewDialer(ro), cmp.Or(o.MaxReplyBytes, DefaultMaxReplyBytes))
	ro.ContextTimeoutEnabled = true
	ro.MaintNotificationsConfig = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
	return ro, nil
}

// setTLS completes ro's TLS configuration with o's files.
func setTLS(ro *redis.Options, o Options) error {
	files := o.CAFile != "" || o.CertFile != "" || o.KeyFile != ""
	if ro.TLSConfig == nil {
		if files {
			return errors.New("redis state: a CA, certificate or key file is given but the URL is not rediss://")
		}
		return nil
	}
	if ro.TLSConfig.InsecureSkipVerify {
		return errors.New("redis state: skip_verify is refused: give the CA file that signed the server's certificate instead")
	}
	if o.CAFile != "" {
		pem, err := os.ReadFile(o.CAFile)
		if err != nil {
			return fmt.Errorf("redis state: reading the CA file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return fmt.Errorf("redis state: no PEM certificate in the CA file %s", o.CAFile)
		}
		ro.TLSConfig.RootCAs = pool
	}
	if (o.CertFile == "") != (o.KeyFile == "") {
		return errors.New("redis state: a client certificate needs both its certificate file and its key file")
	}
	if o.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(o.CertFile, o.KeyFile)
		if err != nil {
			return fmt.Errorf("redis state: the client certificate: %w", err)
		}
		ro.TLSConfig.Certificates = []tls.Certificate{cert}
	}
	return nil
}

// urlSecrets returns the forms the URL's password may take in an error.
func urlSecrets(raw string) []string {
	var s []string
	if u, err := url.Parse(raw); err == nil && u.User != nil {
		if p, ok := u.User.Password(); ok && p != "" {
			s = append(s, p, url.QueryEscape(p), url.PathEscape(p))
		}
	}
	// A URL that does not parse: whatever lies between "//" and "@".
	if _, rest, ok := strings.Cut(raw, "//"); ok {
		if userinfo, _, ok := strings.Cut(rest, "@"); ok && userinfo != "" {
			s = append(s, userinfo)
			if _, p, ok := strings.Cut(userinfo, ":"); ok && p != "" {
				s = append(s, p)
			}
		}
	}
	return s
}

// scrub returns err, or, if its message contains one of secrets, an error
// with the message where they are masked (and no chain to unwrap).
func scrub(err error, secrets []string) error {
	msg := err.Error()
	found := false
	for _, s := range secrets {
		if s != "" && strings.Contains(msg, s) {
			msg = strings.ReplaceAll(msg, s, "xxxxx")
			found = true
		}
	}
	if !found {
		return err
	}
	return errors.New(msg)
}

// Kind returns "redis".
func (b *Backend) Kind() string { return "redis" }

// Shared returns true.
func (b *Backend) Shared() bool { return true }

// key returns the Redis key of kind (kv:, list:, …) and the caller's key.
func (b *Backend) key(kind, key string) string { return b.prefix + kind + key }

// wrap names the operation that failed, never its key. When ctx has
// ended, the error is ctx's: the call gave up because its caller did.
func wrap(ctx context.Context, op string, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		err = ctxErr
	} else if d, ok := ctx.Deadline(); ok && !time.Now().Before(d) {
		err = context.DeadlineExceeded // the connection's deadline came first
	}
	return fmt.Errorf("redis state: %s: %w", op, err)
}

// Put stores value under key for ttl.
func (b *Backend) Put(ctx context.Context, key string, value []byte, ttl time.Duration) error {
	if ttl <= 0 {
		return errors.New("redis state: put: the ttl is not positive")
	}
	if err := b.rdb.Set(ctx, b.key("kv:", key), value, ttl).Err(); err != nil {
		return wrap(ctx, "put", err)
	}
	return nil
}

// PutNew stores value under key for ttl unless a value is there.
func (b *Backend) PutNew(ctx context.Context, key string, value []byte, ttl time.Duration) (bool, error) {
	if ttl <= 0 {
		return false, errors.New("redis state: put: the ttl is not positive")
	}
	ok, err := b.rdb.SetNX(ctx, b.key("kv:", key), value, ttl).Result()
	if err != nil {
		return false, wrap(ctx, "put", err)
	}
	return ok, nil
}

// Get returns the value under key, or state.ErrNotFound.
func (b *Backend) Get(ctx context.Context, key string) ([]byte, error) {
	v, err := b.rdb.Get(ctx, b.key("kv:", key)).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, state.ErrNotFound
	}
	if err != nil {
		return nil, wrap(ctx, "get", err)
	}
	return v, nil
}

// Delete removes key's value and list.
func (b *Backend) Delete(ctx context.Context, key string) error {
	if err := b.rdb.Del(ctx, b.key("kv:", key), b.key("list:", key)).Err(); err != nil {
		return wrap(ctx, "delete", err)
	}
	return nil
}

// Lease takes the lease on key: SET NX PX with a random token, given back
// by a script that deletes the key only if it still holds the token.
func (b *Backend) Lease(ctx context.Context, key string, ttl time.Duration) (func(), error) {
	if ttl <= 0 {
		return nil, errors.New("redis state: lease: the ttl is not positive")
	}
	k := b.key("lease:", key)
	token := rand.Text()
	ok, err := b.rdb.SetNX(ctx, k, token, ttl).Result()
	if err != nil {
		return nil, wrap(ctx, "lease", err)
	}
	if !ok {
		return nil, state.ErrHeld
	}
	var released atomic.Bool
	return func() {
		if !released.CompareAndSwap(false, true) {
			return
		}
		ctx, cancel := b.opContext()
		defer cancel()
		if err := releaseScript.Run(ctx, b.rdb, []string{k}, token).Err(); err != nil {
			b.log.Warn("could not give a lease back; it ends with its ttl", "error", err)
		}
	}, nil
}

// Push appends value to key's list and sets the list to expire ttl later,
// in one transaction.
func (b *Backend) Push(ctx context.Context, key string, value []byte, ttl time.Duration) error {
	if ttl <= 0 {
		return errors.New("redis state: push: the ttl is not positive")
	}
	k := b.key("list:", key)
	_, err := b.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.RPush(ctx, k, value)
		p.PExpire(ctx, k, ttl)
		return nil
	})
	if err != nil {
		return wrap(ctx, "push", err)
	}
	return nil
}

// Pop takes the oldest value of key's list, waiting up to timeout: BLPOPs
// of at most popSlice each, so that a cancelled ctx is noticed soon and no
// value popped by Redis is lost to a read that gave up. Its commands go
// through the pool of Pops (Options.PopPoolSize), never the one of the
// other calls: however many Pops wait, those calls are not kept waiting
// for a connection.
func (b *Backend) Pop(ctx context.Context, key string, timeout time.Duration) ([]byte, error) {
	k := b.key("list:", key)
	deadline := time.Now().Add(timeout)
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		wait := min(time.Until(deadline), b.popSlice)
		ctxBound := false // ctx's deadline comes first
		if d, ok := ctx.Deadline(); ok {
			// Leave the reply time to arrive before ctx's deadline.
			if w := time.Until(d) - b.popSlice/4; w < wait {
				wait, ctxBound = w, true
			}
		}
		if wait < time.Millisecond {
			// BLPOP's 0 is forever: a last look without waiting.
			v, err := b.pops.LPop(ctx, k).Bytes()
			switch {
			case err == nil:
				return v, nil
			case ctxBound:
				<-ctx.Done() // within popSlice/4
				return nil, ctx.Err()
			case !errors.Is(err, redis.Nil):
				return nil, wrap(ctx, "pop", err)
			}
			return nil, state.ErrNotFound
		}
		secs := strconv.FormatFloat(wait.Seconds(), 'f', 3, 64)
		res, err := b.pops.Do(ctx, "blpop", k, secs).StringSlice()
		switch {
		case err == nil && len(res) == 2:
			return []byte(res[1]), nil
		case err == nil:
			return nil, wrap(ctx, "pop", fmt.Errorf("unexpected reply of %d elements", len(res)))
		case !errors.Is(err, redis.Nil):
			return nil, wrap(ctx, "pop", err)
		}
		if !time.Now().Before(deadline) {
			return nil, state.ErrNotFound
		}
	}
}

// Ping checks that Redis answers.
func (b *Backend) Ping(ctx context.Context) error {
	if err := b.rdb.Ping(ctx).Err(); err != nil {
		return wrap(ctx, "ping", err)
	}
	return nil
}

// Close stops the Pub/Sub goroutine and closes the connections. Calling
// it more than once is harmless.
func (b *Backend) Close() error {
	var err error
	b.closed.Do(func() {
		b.ps.close()
		err = errors.Join(b.rdb.Close(), b.pops.Close())
		unsetLibraryLogger(&b.log)
	})
	return err
}

// Tokens returns the token store: records sealed in Redis, with leases.
func (b *Backend) Tokens() auth.Store { return tokenStore{b} }

// opContext returns the context of a call made without one (the token
// store's, a release).
func (b *Backend) opContext() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), b.opTimeout)
}

var errUnexpectedReply = errors.New("unexpected reply")

// newID returns a request id unique among every backend's.
func (b *Backend) newID() string {
	return b.idPrefix + strconv.FormatUint(b.ids.Add(1), 36)
}

// go-redis logs through a package-level logger; the last backend made
// gives it its logger (at Debug: what matters reaches the caller as an
// error), until it is closed.
var (
	libLoggerOnce sync.Once
	libLogger     atomic.Pointer[hclog.Logger]
)

type libLog struct{}

func (libLog) Printf(_ context.Context, format string, v ...any) {
	if l := libLogger.Load(); l != nil {
		(*l).Debug("go-redis: " + fmt.Sprintf(format, v...))
	}
}

func setLibraryLogger(l *hclog.Logger) {
	libLoggerOnce.Do(func() { redis.SetLogger(libLog{}) })
	libLogger.Store(l)
}

func unsetLibraryLogger(l *hclog.Logger) { libLogger.CompareAndSwap(l, nil) }
