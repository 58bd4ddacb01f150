package state

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/mcphost/mcphost/host/auth"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/ratelimit"
)

// sweepInterval is the least time between two sweeps of expired keys.
const sweepInterval = time.Minute

// Local is the state of one process: tokens in the given store (files, as
// the CLI keeps them), tool pins in a file, and everything else in memory.
// It is what the gateway uses without a state block.
type Local struct {
	tokens auth.Store
	pins   *filePins

	mu        sync.Mutex
	kv        map[string]entry
	lists     map[string]*list
	leases    map[string]*leaseEntry
	subs      map[string]map[*subscriber]struct{}
	lastSweep time.Time
	now       func() time.Time
}

type entry struct {
	value  []byte
	expiry time.Time
}

type list struct {
	values [][]byte
	expiry time.Time
	ready  chan struct{} // closed and replaced at each push
}

type leaseEntry struct {
	holder *int // identity of the holder
	expiry time.Time
}

type subscriber struct {
	mu sync.Mutex // held while fn runs: cancel waits for it
	fn func([]byte)
	on bool
}

// NewLocal returns the state of one process. tokens may be nil (tokens in
// memory only); pinsFile "" keeps the tool pins in memory.
func NewLocal(tokens auth.Store, pinsFile string) (*Local, error) {
	if tokens == nil {
		tokens = &memTokens{m: map[string]*auth.Record{}}
	}
	p, err := loadFilePins(pinsFile)
	if err != nil {
		return nil, err
	}
	return &Local{tokens: tokens, pins: p, kv: map[string]entry{}, lists: map[string]*list{},
		leases: map[string]*leaseEntry{}, subs: map[string]map[*subscriber]struct{}{}, now: time.Now}, nil
}

var _ Backend = (*Local)(nil)

// Kind returns "local".
func (l *Local) Kind() string { return "local" }

// Shared returns false.
func (l *Local) Shared() bool { return false }

// Tokens returns the token store given to NewLocal.
func (l *Local) Tokens() auth.Store { return l.tokens }

// Lease takes an in-process lease.
func (l *Local) Lease(_ context.Context, key string, ttl time.Duration) (func(), error) {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if e := l.leases[key]; e != nil && now.Before(e.expiry) {
		return nil, ErrHeld
	}
	me := &leaseEntry{holder: new(int), expiry: now.Add(ttl)}
	l.leases[key] = me
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.leases[key] == me {
			delete(l.leases, key)
		}
	}, nil
}

// Put stores value under key for ttl.
func (l *Local) Put(_ context.Context, key string, value []byte, ttl time.Duration) error {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sweepLocked(now)
	l.kv[key] = entry{value: append([]byte(nil), value...), expiry: now.Add(ttl)}
	return nil
}

// PutNew stores value under key unless a live value is there.
func (l *Local) PutNew(_ context.Context, key string, value []byte, ttl time.Duration) (bool, error) {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if e, ok := l.kv[key]; ok && now.Before(e.expiry) {
		return false, nil
	}
	l.sweepLocked(now)
	l.kv[key] = entry{value: append([]byte(nil), value...), expiry: now.Add(ttl)}
	return true, nil
}

// Get returns the live value under key.
func (l *Local) Get(_ context.Context, key string) ([]byte, error) {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	e, ok := l.kv[key]
	if !ok || !now.Before(e.expiry) {
		return nil, ErrNotFound
	}
	return append([]byte(nil), e.value...), nil
}

// Delete removes key's value (and list).
func (l *Local) Delete(_ context.Context, key string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.kv, key)
	delete(l.lists, key)
	return nil
}

// sweepLocked drops expired values, leases and lists, at most once per
// sweepInterval.
func (l *Local) sweepLocked(now time.Time) {
	if now.Sub(l.lastSweep) < sweepInterval {
		return
	}
	l.lastSweep = now
	for k, e := range l.kv {
		if !now.Before(e.expiry) {
			delete(l.kv, k)
		}
	}
	for k, e := range l.leases {
		if !now.Before(e.expiry) {
			delete(l.leases, k)
		}
	}
	for k, li := range l.lists {
		if !now.Before(li.expiry) {
			delete(l.lists, k)
		}
	}
}

// Publish calls the channel's subscribers on the caller's goroutine.
func (l *Local) Publish(_ context.Context, channel string, msg []byte) error {
	l.mu.Lock()
	subs := make([]*subscriber, 0, len(l.subs[channel]))
	for s := range l.subs[channel] {
		subs = append(subs, s)
	}
	l.mu.Unlock()
	for _, s := range subs {
		s.mu.Lock()
		if s.on {
			s.fn(msg)
		}
		s.mu.Unlock()
	}
	return nil
}

// Subscribe registers fn for channel's messages.
func (l *Local) Subscribe(channel string, fn func([]byte)) func() {
	s := &subscriber{fn: fn, on: true}
	l.mu.Lock()
	if l.subs[channel] == nil {
		l.subs[channel] = map[*subscriber]struct{}{}
	}
	l.subs[channel][s] = struct{}{}
	l.mu.Unlock()
	return func() {
		l.mu.Lock()
		delete(l.subs[channel], s)
		if len(l.subs[channel]) == 0 {
			delete(l.subs, channel)
		}
		l.mu.Unlock()
		s.mu.Lock()
		s.on = false
		s.mu.Unlock()
	}
}

// Push appends value to key's list.
func (l *Local) Push(_ context.Context, key string, value []byte, ttl time.Duration) error {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sweepLocked(now)
	li := l.lists[key]
	if li == nil || !now.Before(li.expiry) {
		li = &list{ready: make(chan struct{})}
		l.lists[key] = li
	}
	li.values = append(li.values, append([]byte(nil), value...))
	li.expiry = now.Add(ttl)
	close(li.ready)
	li.ready = make(chan struct{})
	return nil
}

// Pop takes the oldest value of key's list, waiting up to timeout.
func (l *Local) Pop(ctx context.Context, key string, timeout time.Duration) ([]byte, error) {
	t := time.NewTimer(timeout)
	defer t.Stop()
	for {
		now := l.now()
		l.mu.Lock()
		li := l.lists[key]
		if li == nil || !now.Before(li.expiry) {
			li = &list{ready: make(chan struct{}), expiry: now.Add(timeout)}
			l.lists[key] = li
		}
		if len(li.values) > 0 {
			v := li.values[0]
			li.values = li.values[1:]
			l.mu.Unlock()
			return v, nil
		}
		ready := li.ready
		l.mu.Unlock()
		select {
		case <-ready:
		case <-t.C:
			return nil, ErrNotFound
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// RateLimiter returns an in-process limiter.
func (l *Local) RateLimiter(_ string, o ratelimit.Options) RateLimiter {
	return localLimiter{ratelimit.New(o)}
}

type localLimiter struct{ l *ratelimit.Limiter }

func (ll localLimiter) Acquire(_ context.Context, key string) (func(), time.Duration, ratelimit.Reason, error) {
	release, after, reason, _ := ll.l.Acquire(key)
	return release, after, reason, nil
}

// Pins returns the pins of the file given to NewLocal.
func (l *Local) Pins() Pins { return l.pins }

// Ping returns nil.
func (l *Local) Ping(context.Context) error { return nil }

// Close returns nil.
func (l *Local) Close() error { return nil }

// memTokens is a token store in memory.
type memTokens struct {
	mu sync.Mutex
	m  map[string]*auth.Record
}

func (s *memTokens) Load(key string) (*auth.Record, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.m[key]
	if !ok {
		return nil, auth.ErrNotFound
	}
	return cloneRecord(r), nil
}

func (s *memTokens) Save(key string, r *auth.Record) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[key] = cloneRecord(r)
	return nil
}

// cloneRecord returns a copy of r that shares nothing with it that a
// caller may change.
func cloneRecord(r *auth.Record) *auth.Record {
	c := *r
	c.Scopes = slices.Clone(r.Scopes)
	c.PluginState = bytes.Clone(r.PluginState)
	if r.Token != nil {
		t := *r.Token
		c.Token = &t
	}
	return &c
}

func (s *memTokens) Delete(key string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, key)
	return nil
}

// NewFilePins returns tool pins kept in the JSON file at path (read now;
// written atomically, 0600, at each change); "" keeps them in memory.
func NewFilePins(path string) (Pins, error) { return loadFilePins(path) }

// filePins are tool pins kept in a JSON file (registry name →
// fingerprint), written atomically 0600; "" keeps them in memory.
type filePins struct {
	path string
	mu   sync.Mutex
	seen map[string]string
}

func loadFilePins(path string) (*filePins, error) {
	p := &filePins{path: path, seen: map[string]string{}}
	if path == "" {
		return p, nil
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return p, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading tool pins: %w", err)
	}
	if err := json.Unmarshal(b, &p.seen); err != nil {
		return nil, fmt.Errorf("tool pins file %s is damaged: %w", path, err)
	}
	return p, nil
}

func (p *filePins) Pin(_ context.Context, fps map[string]string) (map[string]string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[string]string, len(fps))
	added := false
	for name, fp := range fps {
		if cur, ok := p.seen[name]; ok {
			out[name] = cur
			continue
		}
		p.seen[name], out[name] = fp, fp
		added = true
	}
	if added {
		return out, p.saveLocked()
	}
	return out, nil
}

func (p *filePins) Approve(_ context.Context, name, fp string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.seen[name] = fp
	return p.saveLocked()
}

func (p *filePins) Get(_ context.Context, name string) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if cur, ok := p.seen[name]; ok {
		return cur, nil
	}
	return "", ErrNotFound
}

func (p *filePins) saveLocked() error {
	if p.path == "" {
		return nil
	}
	b, err := json.MarshalIndent(p.seen, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p.path), 0o700); err != nil {
		return err
	}
	return config.WriteFileAtomic(p.path, b, 0o600)
}
