package redisstate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcphost/mcphost/host/state"
)

// The tool pins are one value, PREFIX pinset: the JSON of a pinSet (every
// registry name → fingerprint, and a version) sealed with Options.PinBox,
// bound to its key. Whoever can write to Redis cannot forge or change a
// pin (the seal), nor move one from another name; what they can do is
// delete the set or put back an older copy of it. Against that, each
// backend (each replica) remembers the newest set it has read or written,
// and its version:
//
//   - a set older than that one (deleted, or an older copy) or one that
//     does not open is stale: this replica vouches only for the pins it
//     remembers (a tool whose definition matches one is served, a changed
//     one is refused as changed), and refuses every other tool
//     (state.ErrPinMissing) instead of pinning it afresh, until an
//     approval (`mcphost tools approve`) writes a newer set;
//   - a pin the replica remembers and the set lacks (deleted, then
//     the set written again by a replica that never saw it) is the
//     remembered one, not a first sight.
//
// A set opened with a key other than MCPHOST_SESSION_KEYS's first is
// sealed again with the first at the next Pin, so that dropping a rotated
// key after every replica has pinned once does not lose the pins.
//
// Versions are the writer's clock in nanoseconds, and always above the
// set's they replace, so an approval from another process (the CLI, which
// remembers nothing) is newer than what running replicas remember.
//
// What someone with access to Redis can still do: make every tool
// refused (delete the set, or damage it) — never served with a definition
// that was not pinned or approved; and, to a process that has seen no set
// yet (a replica started after the deletion), present an empty or older
// set: that process trusts on first sight again, as on a new deployment.
//
// The pins of the former format (the unsealed hash PREFIX pins) are read
// once, by a process that has seen no set, when there is no set yet: they
// become the first sealed set, whose write deletes the hash. A process that
// has seen a sealed set never reads it again (a set deleted is stale to
// it); one started after someone with access to Redis deleted the set and
// wrote such a hash adopts that hash's pins, as it would trust on first
// sight without it.
type pins struct{ b *Backend }

var _ state.Pins = pins{}

// pinSet is the sealed value.
type pinSet struct {
	Version int64             `json:"v"`
	Pins    map[string]string `json:"pins"`
}

// pinMemory is the newest set a backend has read or written (version 0:
// none), with the pins the set lacked and the backend had seen before.
type pinMemory struct {
	mu      sync.Mutex
	version int64
	pins    map[string]string
}

// maxPinAttempts bounds the writes of one call that lose to another
// writer's.
const maxPinAttempts = 8

// Pins returns the tool pins.
func (b *Backend) Pins() state.Pins { return pins{b} }

func (p pins) key() string       { return p.b.prefix + "pinset" }
func (p pins) legacyKey() string { return p.b.prefix + "pins" }

// read returns the stored set's raw value ("" when there is none) and the
// set (nil when there is none, or when it does not open: opened false).
func (p pins) read(ctx context.Context) (raw string, set *pinSet, opened bool, err error) {
	raw, set, opened, _, err = p.readSeal(ctx)
	return raw, set, opened, err
}

// readSeal is read, also reporting whether the set was sealed with the
// first key.
func (p pins) readSeal(ctx context.Context) (raw string, set *pinSet, opened, current bool, err error) {
	raw, err = p.b.rdb.Get(ctx, p.key()).Result()
	if errors.Is(err, redis.Nil) {
		return "", nil, true, true, nil
	}
	if err != nil {
		return "", nil, false, false, err
	}
	plain, err := p.b.pinBox.Open(nil, []byte(raw), []byte(p.key()))
	if err != nil {
		return raw, nil, false, false, nil
	}
	var s pinSet
	if err := json.Unmarshal(plain, &s); err != nil || s.Version <= 0 {
		return raw, nil, false, false, nil
	}
	if s.Pins == nil {
		s.Pins = map[string]string{}
	}
	return raw, &s, true, p.b.pinBox.SealedByFirst([]byte(raw)), nil
}

// write replaces the set whose raw value was old ("": none) with set, and
// reports whether it did (false: another writer came first).
func (p pins) write(ctx context.Context, old string, set *pinSet) (bool, error) {
	plain, err := json.Marshal(set)
	if err != nil {
		return false, err
	}
	sealed := p.b.pinBox.Seal(nil, plain, []byte(p.key()))
	n, err := pinSwapScript.Run(ctx, p.b.rdb, []string{p.key(), p.legacyKey()}, old, sealed).Int()
	if err != nil {
		return false, err
	}
	return n == 1, nil
}

// nextVersion returns a version above the set's and the remembered one.
func nextVersion(set *pinSet, remembered int64) int64 {
	v := time.Now().UnixNano()
	if set != nil {
		v = max(v, set.Version+1)
	}
	return max(v, remembered+1)
}

// remember makes set the newest the backend has seen, keeping the pins it
// remembers that set lacks.
func (p pins) remember(set *pinSet) {
	m := &p.b.pinMem
	m.mu.Lock()
	defer m.mu.Unlock()
	if set.Version < m.version {
		return
	}
	if m.pins == nil {
		m.pins = map[string]string{}
	}
	m.version = set.Version
	maps.Copy(m.pins, set.Pins)
}

// memory returns the remembered version and pins (a copy).
func (p pins) memory() (int64, map[string]string) {
	m := &p.b.pinMem
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.version, maps.Clone(m.pins)
}

// staleReason says why a set is stale, or "" when it is not.
func staleReason(set *pinSet, opened bool, remembered int64) string {
	switch {
	case !opened:
		return "the tool pins in Redis do not open with MCPHOST_SESSION_KEYS: damaged, written by someone else, or sealed with a key since dropped"
	case remembered > 0 && (set == nil || set.Version < remembered):
		return "the tool pins in Redis are older than those this replica has seen: deleted or replaced in Redis"
	}
	return ""
}

// Pin records the fingerprints of the names not yet pinned and returns the
// recorded fingerprint of each (see pins for what a stale set does).
func (p pins) Pin(ctx context.Context, fps map[string]string) (map[string]string, error) {
	out := make(map[string]string, len(fps))
	if len(fps) == 0 {
		return out, nil
	}
	for range maxPinAttempts {
		raw, set, opened, current, err := p.readSeal(ctx)
		if err != nil {
			return nil, wrap(ctx, "pinning tools", err)
		}
		version, mem := p.memory()
		if reason := staleReason(set, opened, version); reason != "" {
			var missing []string
			for name := range fps {
				if fp, ok := mem[name]; ok {
					out[name] = fp
				} else {
					missing = append(missing, name)
				}
			}
			if len(missing) == 0 {
				return out, nil
			}
			slices.Sort(missing)
			return out, &state.MissingPinsError{Names: missing, Reason: reason}
		}
		// A set sealed with a key other than the first is sealed again, so
		// that it still opens once that key is dropped.
		write := !current
		if set == nil { // none yet, and none seen (else it would be stale)
			if set, err = p.legacy(ctx); err != nil {
				return nil, wrap(ctx, "pinning tools", err)
			}
			write = len(set.Pins) > 0
		}
		for name, fp := range fps {
			switch cur, ok := set.Pins[name]; {
			case ok:
				out[name] = cur
			case mem[name] != "":
				out[name] = mem[name] // remembered: not a first sight
			default:
				set.Pins[name], out[name] = fp, fp
				write = true
			}
		}
		if !write {
			p.remember(set)
			return out, nil
		}
		set.Version = nextVersion(set, version)
		ok, err := p.write(ctx, raw, set)
		if err != nil {
			return nil, wrap(ctx, "pinning tools", err)
		}
		if ok {
			p.remember(set)
			return out, nil
		}
		clear(out) // another writer came first: again, with its set
	}
	return nil, wrap(ctx, "pinning tools", fmt.Errorf("the pins kept changing under %d attempts", maxPinAttempts))
}

// legacy returns a set of the pins of the former format (none: empty).
func (p pins) legacy(ctx context.Context) (*pinSet, error) {
	old, err := p.b.rdb.HGetAll(ctx, p.legacyKey()).Result()
	if err != nil {
		return nil, err
	}
	set := &pinSet{Pins: map[string]string{}}
	maps.Copy(set.Pins, old)
	return set, nil
}

// Approve records fp for name, replacing any, in a newer set. A stale set
// is replaced by the pins this backend remembers (and those of the stale
// set it does not), so that approving one tool does not make an older
// copy of the set the newest.
func (p pins) Approve(ctx context.Context, name, fp string) error {
	for range maxPinAttempts {
		raw, set, opened, err := p.read(ctx)
		if err != nil {
			return wrap(ctx, "approving a tool", err)
		}
		version, mem := p.memory()
		next := &pinSet{Pins: map[string]string{}}
		switch {
		case staleReason(set, opened, version) != "":
			if set != nil {
				maps.Copy(next.Pins, set.Pins)
			}
			maps.Copy(next.Pins, mem)
		case set != nil:
			maps.Copy(next.Pins, set.Pins)
		default: // none yet, and none seen
			if next, err = p.legacy(ctx); err != nil {
				return wrap(ctx, "approving a tool", err)
			}
		}
		next.Pins[name] = fp
		next.Version = nextVersion(set, version)
		ok, err := p.write(ctx, raw, next)
		if err != nil {
			return wrap(ctx, "approving a tool", err)
		}
		if ok {
			p.remember(next)
			return nil
		}
	}
	return wrap(ctx, "approving a tool", fmt.Errorf("the pins kept changing under %d attempts", maxPinAttempts))
}

// Get returns name's recorded fingerprint, or state.ErrNotFound (or a
// *state.MissingPinsError when the set is stale and name is not
// remembered).
func (p pins) Get(ctx context.Context, name string) (string, error) {
	_, set, opened, err := p.read(ctx)
	if err != nil {
		return "", wrap(ctx, "reading a tool pin", err)
	}
	version, mem := p.memory()
	reason := staleReason(set, opened, version)
	if reason == "" && set != nil {
		if fp, ok := set.Pins[name]; ok {
			return fp, nil
		}
	}
	if fp, ok := mem[name]; ok {
		return fp, nil
	}
	if reason != "" {
		return "", &state.MissingPinsError{Names: []string{name}, Reason: reason}
	}
	return "", state.ErrNotFound
}
