package cli

import (
	"context"
	"os"
	"os/signal"
	"sync"
)

// signals turns the process's signals into a context: SIGINT and SIGTERM
// cancel it (the command shuts down cleanly, its servers with it), and so
// does SIGHUP, unless a command handles hang-ups itself (serve does: until
// configuration reload exists, it logs and ignores them).
type signals struct {
	ch     chan os.Signal
	cancel context.CancelFunc
	stop   chan struct{}
	done   chan struct{}

	mu     sync.Mutex
	hangup func()
}

// watchSignals starts watching; stop it with close.
func watchSignals(parent context.Context) (context.Context, *signals) {
	ctx, cancel := context.WithCancel(parent)
	s := &signals{ch: make(chan os.Signal, 4), cancel: cancel, stop: make(chan struct{}), done: make(chan struct{})}
	signal.Notify(s.ch, shutdownSignals...)
	go s.loop()
	return ctx, s
}

func (s *signals) loop() {
	defer close(s.done)
	for {
		select {
		case <-s.stop:
			return
		case sig := <-s.ch:
			if isHangup(sig) {
				s.mu.Lock()
				h := s.hangup
				s.mu.Unlock()
				if h != nil {
					h()
					continue
				}
			}
			s.cancel()
		}
	}
}

// onHangup makes SIGHUP call f instead of shutting down. s may be nil (Run
// called by a test or a program, not by Main).
func (s *signals) onHangup(f func()) {
	if s == nil {
		return
	}
	s.mu.Lock()
	s.hangup = f
	s.mu.Unlock()
}

func (s *signals) close() {
	signal.Stop(s.ch)
	close(s.stop)
	<-s.done
	s.cancel()
}
