package cluster

import (
	"sync"
	"time"
)

// MaxAge bounds the age of a sealed message when it arrives (a replayed
// one is older), with room for the replicas' clocks to differ.
const MaxAge = 2 * time.Minute

// Fresh reports whether a message sealed at t (Unix ms) is recent enough
// to be taken: within MaxAge of now, either way.
func Fresh(t int64) bool {
	age := time.Since(time.UnixMilli(t))
	return age <= MaxAge && age >= -MaxAge
}

// Seen holds the ids of the sealed messages a replica took, each until
// the message is too old to be taken anyway (MaxAge past its time),
// at most MaxSeen: a message whose id is there is a replay. Its zero
// value is empty.
type Seen struct {
	mu    sync.Mutex
	ids   map[string]int64 // id -> when it may be forgotten (Unix ms)
	sweep int64            // when next to forget those old enough (Unix ms)
}

// MaxSeen bounds Seen: past it (with none old enough to forget), a
// message is dropped rather than taken unchecked.
const MaxSeen = 1 << 16

// First reports whether id, of a message sealed at t (Unix ms), was not
// taken before (and records it), false for a replay, or for an empty id.
func (m *Seen) First(id string, t int64) bool {
	if id == "" {
		return false
	}
	now := time.Now().UnixMilli()
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.ids[id]; ok {
		return false
	}
	if m.ids == nil {
		m.ids = map[string]int64{}
	}
	if now >= m.sweep || len(m.ids) >= MaxSeen {
		for k, until := range m.ids {
			if until < now {
				delete(m.ids, k)
			}
		}
		m.sweep = now + MaxAge.Milliseconds()
		if len(m.ids) >= MaxSeen {
			return false
		}
	}
	m.ids[id] = t + MaxAge.Milliseconds()
	return true
}

// Has reports whether id was taken (First) and is still remembered.
func (m *Seen) Has(id string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.ids[id]
	return ok
}
