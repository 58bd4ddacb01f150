package audit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
)

// syncBuffer is a bytes.Buffer safe for the writer goroutine and the test.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// gateWriter's writes wait until gate is closed, like a stuck disk.
type gateWriter struct {
	syncBuffer
	gate chan struct{}
}

func (w *gateWriter) Write(p []byte) (int, error) {
	<-w.gate
	return w.syncBuffer.Write(p)
}

// lines decodes JSON Lines, failing on a line that is not a JSON object.
func lines(t *testing.T, s string) []map[string]any {
	t.Helper()
	if s != "" && !strings.HasSuffix(s, "\n") {
		t.Errorf("output does not end with a newline: %q", s)
	}
	var out []map[string]any
	for l := range strings.Lines(s) {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		out = append(out, m)
	}
	return out
}

// tools returns each line's tool, or "dropped N" for a drop line.
func tools(t *testing.T, s string) []string {
	t.Helper()
	var out []string
	for _, m := range lines(t, s) {
		if m["event"] == EventDropped {
			out = append(out, fmt.Sprintf("dropped %v", m["dropped"]))
			continue
		}
		out = append(out, fmt.Sprint(m["tool"]))
	}
	return out
}

func rec(tool string) *Record {
	return &Record{Time: t0, Event: EventToolCall, Tool: tool, Outcome: OutcomeOK, Duration: 1500 * time.Microsecond}
}

func fixedNow() time.Time { return t0 }

func TestWriteClose(t *testing.T) {
	t.Parallel()
	var buf syncBuffer
	l := New(&buf, &Options{Now: fixedNow})
	l.Write(rec("a"))
	l.Write(&Record{Event: EventRefused, Outcome: OutcomeRateLimited, Status: 429}) // zero time: now
	l.Write(nil)
	if err := l.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := `{"time":"2025-06-01T12:00:00.123Z","event":"tools/call","tool":"a","outcome":"ok","duration_ms":1.5}` + "\n" +
		`{"time":"2025-06-01T12:00:00.123Z","event":"refused","outcome":"rate_limited","status":429}` + "\n"
	if diff := cmp.Diff(want, buf.String()); diff != "" {
		t.Errorf("log (-want +got):\n%s", diff)
	}
	if l.Dropped() != 0 || l.Err() != nil {
		t.Errorf("Dropped = %d, Err = %v", l.Dropped(), l.Err())
	}
}

func TestWriteCopies(t *testing.T) {
	t.Parallel()
	var buf syncBuffer
	l := New(&buf, nil)
	r := rec("first")
	l.Write(r)
	r.Tool = "second"
	l.Write(r)
	l.Close(context.Background())
	if diff := cmp.Diff([]string{"first", "second"}, tools(t, buf.String())); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
}

// TestCloseFlushes writes from many goroutines and checks that Close
// leaves every record in the log.
func TestCloseFlushes(t *testing.T) {
	t.Parallel()
	const writers, each = 8, 400 // fewer than DefaultBuffer in all
	var buf syncBuffer
	l := New(&buf, nil)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				l.Write(rec(fmt.Sprintf("w%d-%d", w, i)))
			}
		})
	}
	wg.Wait()
	if err := l.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := lines(t, buf.String())
	if len(got) != writers*each || l.Dropped() != 0 {
		t.Errorf("%d lines, %d dropped; want %d, 0", len(got), l.Dropped(), writers*each)
	}
	seen := map[any]bool{}
	for _, m := range got {
		seen[m["tool"]] = true
	}
	if len(seen) != writers*each {
		t.Errorf("%d distinct records, want %d", len(seen), writers*each)
	}
}

func TestFullQueueDrops(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		w := &gateWriter{gate: make(chan struct{})}
		l := New(w, &Options{Buffer: 2, Now: fixedNow})
		l.Write(rec("1"))
		synctest.Wait() // the writer has taken 1 and is stuck writing it
		for _, tool := range []string{"2", "3", "4", "5"} {
			l.Write(rec(tool)) // 2 and 3 wait; 4 and 5 are dropped
		}
		if got := l.Dropped(); got != 2 {
			t.Errorf("Dropped = %d, want 2", got)
		}
		close(w.gate)
		synctest.Wait()
		l.Write(rec("6"))
		if err := l.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		want := []string{"1", "2", "3", "dropped 2", "6"}
		if diff := cmp.Diff(want, tools(t, w.String())); diff != "" {
			t.Errorf("log (-want +got):\n%s", diff)
		}
		if !strings.Contains(w.String(), `{"time":"2025-06-01T12:00:00.123Z","event":"audit_dropped","dropped":2}`+"\n") {
			t.Errorf("no drop line in\n%s", w.String())
		}
	})
}

// TestWriteNeverBlocks writes far more than the queue holds to a writer
// that is stuck: if Write waited, the bubble would deadlock and
// synctest.Test fail.
func TestWriteNeverBlocks(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		w := &gateWriter{gate: make(chan struct{})}
		l := New(w, &Options{Buffer: 16})
		start := time.Now()
		const n = 10000
		for i := range n {
			l.Write(rec(fmt.Sprint(i)))
		}
		if d := time.Since(start); d != 0 {
			t.Errorf("Write waited %v", d)
		}
		synctest.Wait()
		// At most the batch being written and a full queue are kept.
		if got := l.Dropped(); got < n-2*16 {
			t.Errorf("Dropped = %d, want at least %d", got, n-2*16)
		}
		close(w.gate)
		if err := l.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		var written, reported uint64
		for _, m := range lines(t, w.String()) {
			if m["event"] == EventDropped {
				reported += uint64(m["dropped"].(float64))
			} else {
				written++
			}
		}
		if written+l.Dropped() != n || reported != l.Dropped() {
			t.Errorf("%d written, %d dropped, %d reported dropped; want %d in all", written, l.Dropped(), reported, n)
		}
	})
}

func TestWriteAfterClose(t *testing.T) {
	t.Parallel()
	var buf syncBuffer
	l := New(&buf, nil)
	l.Write(rec("before"))
	if err := l.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	l.Write(rec("after"))
	if err := l.Close(context.Background()); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if diff := cmp.Diff([]string{"before"}, tools(t, buf.String())); diff != "" {
		t.Errorf("log (-want +got):\n%s", diff)
	}
	if got := l.Dropped(); got != 1 {
		t.Errorf("Dropped = %d, want 1", got)
	}
}

func TestCloseGivesUp(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		w := &gateWriter{gate: make(chan struct{})}
		l := New(w, &Options{Buffer: 8})
		l.Write(rec("1"))
		synctest.Wait() // stuck writing 1
		l.Write(rec("2"))
		l.Write(rec("3"))
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		start := time.Now()
		err := l.Close(ctx)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Close = %v, want a deadline error", err)
		}
		if d := time.Since(start); d != time.Second {
			t.Errorf("Close took %v, want 1s", d)
		}
		close(w.gate) // the stuck write returns; the writer stops
		synctest.Wait()
		if diff := cmp.Diff([]string{"1"}, tools(t, w.String())); diff != "" {
			t.Errorf("log (-want +got):\n%s", diff)
		}
		if got := l.Dropped(); got != 2 {
			t.Errorf("Dropped = %d, want 2", got)
		}
	})
}

// failWriter fails its first fails writes after writing half of what it is
// given.
type failWriter struct {
	syncBuffer
	fails int
}

var errDiskFull = errors.New("no space left on device")

func (w *failWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.fails > 0 {
		w.fails--
		n := len(p) / 2
		w.buf.Write(p[:n])
		return n, errDiskFull
	}
	return w.buf.Write(p)
}

func TestWriteError(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		w := &failWriter{fails: 1}
		l := New(w, &Options{Now: fixedNow})
		l.Write(rec("1")) // half written, then the error
		synctest.Wait()
		err := l.Err()
		if !errors.Is(err, errDiskFull) || !strings.Contains(err.Error(), "audit: writing audit log") {
			t.Errorf("Err = %v, want the write error, wrapped", err)
		}
		if got := l.Dropped(); got != 1 {
			t.Errorf("Dropped = %d, want 1", got)
		}
		l.Write(rec("2"))
		if err := l.Close(context.Background()); !errors.Is(err, errDiskFull) {
			t.Errorf("Close = %v, want the first write error", err)
		}
		// The torn line is ended, and the next lines are whole.
		ls := strings.Split(w.String(), "\n")
		if len(ls) != 4 || ls[3] != "" || json.Valid([]byte(ls[0])) {
			t.Fatalf("log:\n%s", w.String())
		}
		if diff := cmp.Diff([]string{"2", "dropped 1"}, tools(t, ls[1]+"\n"+ls[2]+"\n")); diff != "" {
			t.Errorf("log after the error (-want +got):\n%s", diff)
		}
	})
}

// stepWriter does what it is told, one write at a time: each Write waits
// for an error to return (nil to succeed) from steps.
type stepWriter struct {
	syncBuffer
	steps chan error
}

func (w *stepWriter) Write(p []byte) (int, error) {
	if err := <-w.steps; err != nil {
		return 0, err
	}
	return w.syncBuffer.Write(p)
}

// TestWriteErrorLosesDropLine checks that a drop line lost to a write
// error is written again, with the records lost with it.
func TestWriteErrorLosesDropLine(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		w := &stepWriter{steps: make(chan error)}
		l := New(w, &Options{Buffer: 1, Now: fixedNow})
		l.Write(rec("1"))
		synctest.Wait() // writing 1
		l.Write(rec("2"))
		l.Write(rec("3")) // dropped
		w.steps <- nil    // 1 is written
		synctest.Wait()   // writing 2 and "dropped 1"
		w.steps <- errDiskFull
		synctest.Wait()
		l.Write(rec("4")) // written with "dropped 2": 3, and 2 lost to the error
		w.steps <- nil
		synctest.Wait()
		if err := l.Close(context.Background()); !errors.Is(err, errDiskFull) {
			t.Errorf("Close = %v, want the write error", err)
		}
		if diff := cmp.Diff([]string{"1", "4", "dropped 2"}, tools(t, w.String())); diff != "" {
			t.Errorf("log (-want +got):\n%s", diff)
		}
		if got := l.Dropped(); got != 2 {
			t.Errorf("Dropped = %d, want 2", got)
		}
	})
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// TestWriteErrorDoesNotBlock writes to a log that always fails.
func TestWriteErrorDoesNotBlock(t *testing.T) {
	t.Parallel()
	l := New(writerFunc(func([]byte) (int, error) { return 0, errDiskFull }), nil)
	for i := range 1000 {
		l.Write(rec(fmt.Sprint(i)))
	}
	if err := l.Close(context.Background()); !errors.Is(err, errDiskFull) {
		t.Errorf("Close = %v", err)
	}
	if got := l.Dropped(); got != 1000 {
		t.Errorf("Dropped = %d, want 1000", got)
	}
}

func TestNilLog(t *testing.T) {
	t.Parallel()
	var l *Log
	l.Write(rec("a"))
	if l.Dropped() != 0 || l.Err() != nil || l.Close(context.Background()) != nil {
		t.Errorf("a nil Log is not a no-op")
	}
}

func TestOpen(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.jsonl")
	if err := os.WriteFile(path, []byte("{\"earlier\":true}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	l.Write(rec("a"))
	if err := l.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	got := lines(t, string(data))
	if len(got) != 2 || got[0]["earlier"] != true || got[1]["tool"] != "a" {
		t.Errorf("file does not hold the earlier line and the new one:\n%s", data)
	}
}

func TestOpenErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tests := []struct {
		name, path, want string
	}{
		{"empty", "", `no path (use "-" for standard error)`},
		{"no directory", filepath.Join(dir, "missing", "audit.jsonl"), "directory " + filepath.Join(dir, "missing") + " does not exist"},
		{"a directory", dir, dir},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			l, err := Open(tt.path, nil)
			if err == nil {
				l.Close(context.Background())
				t.Fatalf("Open(%q) succeeded", tt.path)
			}
			if !strings.HasPrefix(err.Error(), "audit: ") || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Open(%q) = %v, want it to mention %q", tt.path, err, tt.want)
			}
		})
	}
}

// TestOpenStderr replaces os.Stderr, so it does not run in parallel.
func TestOpenStderr(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	saved := os.Stderr
	os.Stderr = f
	defer func() { os.Stderr = saved }()

	l, err := Open("-", nil)
	if err != nil {
		t.Fatal(err)
	}
	l.Write(rec("a"))
	if err := l.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(f, "still open\n"); err != nil {
		t.Errorf("Close closed standard error: %v", err)
	}
	data, err := os.ReadFile(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	ls := strings.SplitAfter(string(data), "\n")
	if len(ls) != 3 || ls[1] != "still open\n" {
		t.Fatalf("stderr:\n%s", data)
	}
	if diff := cmp.Diff([]string{"a"}, tools(t, ls[0])); diff != "" {
		t.Errorf("stderr (-want +got):\n%s", diff)
	}
}
