package conn

import "sync"

// tailBuffer keeps the last max bytes written to it. It is safe for concurrent use.
type tailBuffer struct {
	mu      sync.Mutex
	max     int
	buf     []byte
	dropped bool
}

func newTailBuffer(max int) *tailBuffer { return &tailBuffer{max: max} }

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := len(p)
	if len(p) >= b.max {
		p = p[len(p)-b.max:]
		b.buf = b.buf[:0]
		b.dropped = true
	} else if over := len(b.buf) + len(p) - b.max; over > 0 {
		b.buf = append(b.buf[:0], b.buf[over:]...)
		b.dropped = true
	}
	b.buf = append(b.buf, p...)
	return n, nil
}

// String returns the retained tail, marked when earlier output was dropped.
func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.dropped {
		return "…" + string(b.buf)
	}
	return string(b.buf)
}
