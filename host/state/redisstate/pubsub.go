package redisstate

import (
	"context"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// Timing of the Pub/Sub connection.
const (
	// pingEvery is how long the connection may be quiet before a PING
	// checks it; with no answer in as long again it is made anew, which
	// finds a connection that died silently (a half-open TCP connection).
	pingEvery = 5 * time.Second
	// reconnect backoff after an error.
	minBackoff = 50 * time.Millisecond
	maxBackoff = 2 * time.Second
)

// pubsub is the backend's one Pub/Sub connection, made at the first
// Subscribe, and the one goroutine (run) that receives every channel's
// messages and calls the subscribers, in order.
//
// The connection has a client of its own whose OnConnect counts the
// connections made: when run reads from a connection made after the one it
// read from before, the previous one was lost, with whatever was published
// meanwhile, and every subscriber is called with nil first.
type pubsub struct {
	b         *Backend
	client    *redis.Client
	conns     atomic.Uint64 // connections made by client
	healthy   atomic.Bool   // the last receive did not fail
	pingEvery time.Duration
	ctx       context.Context // ends with close
	cancel    context.CancelFunc
	done      chan struct{} // closed when run returns

	// cmdMu orders the SUBSCRIBE and UNSUBSCRIBE commands as the changes
	// of channels they follow; it is taken before mu.
	cmdMu sync.Mutex

	mu       sync.Mutex
	ps       *redis.PubSub // nil until the first Subscribe
	channels map[string]*channelSubs
	closed   bool
}

// channelSubs are the subscribers of one Redis channel.
type channelSubs struct {
	subs  []*subscriber
	ready chan struct{} // closed when Redis confirms the subscription
	isSet bool          // ready is closed
}

type subscriber struct {
	mu sync.Mutex // held while fn runs: cancel waits for it
	fn func([]byte)
	on bool
}

func newPubsub(b *Backend, o *redis.Options) *pubsub {
	p := &pubsub{b: b, pingEvery: pingEvery, done: make(chan struct{}), channels: map[string]*channelSubs{}}
	o.OnConnect = func(context.Context, *redis.Conn) error {
		p.conns.Add(1)
		return nil
	}
	// A connection that fails is made again by the loop, with backoff.
	o.MaxRetries = -1
	p.client = redis.NewClient(o)
	p.healthy.Store(true)
	p.ctx, p.cancel = context.WithCancel(context.Background())
	return p
}

// Publish sends msg to channel's subscribers in every process.
func (b *Backend) Publish(ctx context.Context, channel string, msg []byte) error {
	if err := b.rdb.Publish(ctx, b.key("ch:", channel), msg).Err(); err != nil {
		return wrap(ctx, "publish", err)
	}
	return nil
}

// Subscribe calls fn with each message on channel from now on: it returns
// once Redis has confirmed the subscription (at once if the Pub/Sub
// connection is down: the subscription is made with the connection, and fn
// is then called with nil). fn runs on the goroutine that
// receives every channel's messages and must not block; cancel must not
// be called from fn.
func (b *Backend) Subscribe(channel string, fn func([]byte)) (cancel func()) {
	p := b.ps
	rc := b.key("ch:", channel)
	s := &subscriber{fn: fn, on: true}

	p.cmdMu.Lock()
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		p.cmdMu.Unlock()
		return func() {}
	}
	if p.ps == nil {
		p.ps = p.client.Subscribe(p.ctx)
		go p.run()
	}
	cs := p.channels[rc]
	first := cs == nil
	if first {
		cs = &channelSubs{ready: make(chan struct{})}
		p.channels[rc] = cs
	}
	cs.subs = append(cs.subs, s)
	ps, ready := p.ps, cs.ready
	p.mu.Unlock()
	wait := p.healthy.Load()
	if first {
		ctx, cancel := context.WithTimeout(context.Background(), b.opTimeout)
		if err := ps.Subscribe(ctx, rc); err != nil {
			b.log.Warn("could not subscribe now; the subscription is made with the Pub/Sub connection", "error", err)
			wait = false
		}
		cancel()
	}
	p.cmdMu.Unlock()

	// Wait for Redis to confirm, so that what is published from now on is
	// received; not while the connection is down (fn gets nil once it is
	// made again).
	if wait {
		t := time.NewTimer(b.opTimeout)
		select {
		case <-ready:
		case <-t.C:
			b.log.Warn("Redis did not confirm a subscription in time; messages published meanwhile may be missed")
		case <-p.ctx.Done():
		}
		t.Stop()
	}

	var once sync.Once
	return func() {
		once.Do(func() { p.unsubscribe(rc, s) })
		s.mu.Lock()
		s.on = false
		s.mu.Unlock()
	}
}

// unsubscribe removes s from rc's subscribers, and unsubscribes from rc
// when it was the last.
func (p *pubsub) unsubscribe(rc string, s *subscriber) {
	p.cmdMu.Lock()
	defer p.cmdMu.Unlock()
	p.mu.Lock()
	last := false
	if cs := p.channels[rc]; cs != nil {
		for i, x := range cs.subs {
			if x == s {
				cs.subs = append(cs.subs[:i:i], cs.subs[i+1:]...)
				break
			}
		}
		if len(cs.subs) == 0 {
			delete(p.channels, rc)
			last = true
		}
	}
	ps, closed := p.ps, p.closed
	p.mu.Unlock()
	if last && !closed {
		ctx, cancel := context.WithTimeout(context.Background(), p.b.opTimeout)
		defer cancel()
		if err := ps.Unsubscribe(ctx, rc); err != nil {
			p.b.log.Debug("could not unsubscribe; the connection is made again without the channel", "error", err)
		}
	}
}

// run receives the messages of every channel and calls their subscribers,
// until close.
func (p *pubsub) run() {
	defer close(p.done)
	var (
		seen    uint64 // the connection last read from, by conns
		pinged  bool   // a PING is unanswered
		failing bool   // the last receive failed
		backoff = minBackoff
	)
	for {
		p.mu.Lock()
		ps := p.ps
		p.mu.Unlock()
		msg, err := ps.ReceiveTimeout(p.ctx, p.pingEvery)
		if p.ctx.Err() != nil {
			return
		}
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				if pinged {
					p.b.log.Warn("Redis did not answer a PING on the Pub/Sub connection; connecting again")
					p.replace()
					pinged = false
					continue
				}
				pinged = ps.Ping(p.ctx) == nil
				continue
			}
			if !failing {
				p.b.log.Warn("lost the Pub/Sub connection to Redis; connecting again", "error", err)
				failing = true
				p.healthy.Store(false)
			}
			select {
			case <-p.ctx.Done():
				return
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, maxBackoff)
			continue
		}
		pinged, backoff = false, minBackoff
		if n := p.conns.Load(); n != seen {
			if seen != 0 {
				p.b.log.Info("Pub/Sub connection to Redis made again; subscribers forget what they cache")
				p.resync()
			}
			seen = n
		}
		if failing {
			failing = false
			p.healthy.Store(true)
		}
		switch m := msg.(type) {
		case *redis.Message:
			p.dispatch(m)
		case *redis.Subscription:
			if m.Kind == "subscribe" {
				p.mu.Lock()
				if cs := p.channels[m.Channel]; cs != nil && !cs.isSet {
					close(cs.ready)
					cs.isSet = true
				}
				p.mu.Unlock()
			}
		}
	}
}

// dispatch calls the subscribers of m's channel with its payload.
func (p *pubsub) dispatch(m *redis.Message) {
	p.mu.Lock()
	var subs []*subscriber
	if cs := p.channels[m.Channel]; cs != nil {
		subs = append(subs, cs.subs...)
	}
	p.mu.Unlock()
	for _, s := range subs {
		s.call([]byte(m.Payload))
	}
}

// resync calls every subscriber with nil: messages may have been lost.
func (p *pubsub) resync() {
	p.mu.Lock()
	var subs []*subscriber
	for _, cs := range p.channels {
		subs = append(subs, cs.subs...)
	}
	p.mu.Unlock()
	for _, s := range subs {
		s.call(nil)
	}
}

func (s *subscriber) call(msg []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.on {
		s.fn(msg)
	}
}

// replace closes the Pub/Sub connection and makes another, subscribed to
// every channel.
func (p *pubsub) replace() {
	p.cmdMu.Lock()
	defer p.cmdMu.Unlock()
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	channels := make([]string, 0, len(p.channels))
	for rc := range p.channels {
		channels = append(channels, rc)
	}
	old := p.ps
	p.mu.Unlock()
	ps := p.client.Subscribe(p.ctx, channels...)
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		ps.Close()
		return
	}
	p.ps = ps
	p.mu.Unlock()
	old.Close()
}

// close ends run and closes the connection.
func (p *pubsub) close() {
	p.mu.Lock()
	p.closed = true
	ps := p.ps
	p.mu.Unlock()
	p.cancel()
	if ps != nil {
		ps.Close()
		<-p.done
	}
	p.client.Close()
}
