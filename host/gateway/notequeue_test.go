package gateway

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hashicorp/go-hclog"
)

// TestNoteQueue: a queue whose writer is stalled keeps the latest
// notification per key, at most MaxQueuedNotes, dropping the oldest, and
// logs its drops at most once per NoteDropLogEvery, with their count; once
// the writer goes on, what waits is written in order; after Close nothing
// is. (The queue is new: on the old code statuses were written by one
// gateway-wide goroutine and every drop logged one line.)
func TestNoteQueue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logged bytes.Buffer
		var logMu sync.Mutex
		log := hclog.New(&hclog.LoggerOptions{Output: &lockedWriter{w: &logged, mu: &logMu}, Level: hclog.Warn})
		release := make(chan struct{})
		var mu sync.Mutex
		var written []string
		q := NewNoteQueue(log, func(ctx context.Context, n QueuedNote) {
			if string(n.Msg) == "first" {
				<-release
			}
			mu.Lock()
			written = append(written, string(n.Msg))
			mu.Unlock()
		})
		q.Add(QueuedNote{Key: "a", Msg: []byte("first")})
		synctest.Wait() // the writer holds "first"
		for i := range 10000 {
			q.Add(QueuedNote{Key: fmt.Sprint("k", i), Msg: fmt.Appendf(nil, "n%d", i)})
		}
		q.Add(QueuedNote{Key: "k9999", Msg: []byte("latest")}) // replaces n9999 where it waits
		time.Sleep(NoteDropLogEvery)
		q.Add(QueuedNote{Key: "x", Msg: []byte("x")}) // one more drop, logged: the interval passed
		logMu.Lock()
		lines := strings.Count(logged.String(), "notifications dropped")
		text := logged.String()
		logMu.Unlock()
		if lines != 2 || !strings.Contains(text, "dropped=1\n") && !strings.Contains(text, "dropped=1 ") {
			t.Errorf("%d log lines, want 2 (the first drop, then the count after the interval):\n%s", lines, text)
		}
		if !strings.Contains(text, fmt.Sprint("dropped=", 10000-MaxQueuedNotes)) {
			t.Errorf("the second line does not count the drops of the interval:\n%s", text)
		}
		close(release)
		<-q.Idle()
		mu.Lock()
		got := written
		mu.Unlock()
		if len(got) != 1+MaxQueuedNotes || got[0] != "first" || got[len(got)-1] != "x" || got[len(got)-2] != "latest" {
			t.Errorf("written %d: first %v, last %v", len(got), got[:min(3, len(got))], got[max(0, len(got)-3):])
		}
		q.Close()
		q.Add(QueuedNote{Msg: []byte("late")})
		synctest.Wait()
		mu.Lock()
		defer mu.Unlock()
		if written[len(written)-1] == "late" {
			t.Error("written after Close")
		}
	})
}

type lockedWriter struct {
	w  *bytes.Buffer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
