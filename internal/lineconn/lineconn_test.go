package lineconn

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/mcphost/mcphost/internal/lineio"
	"github.com/mcphost/mcphost/internal/testing/syncbuf"
)

// closer records the order in which streams are closed.
type closer struct {
	name  string
	order *[]string
	mu    *sync.Mutex
	err   error
}

func (c closer) Close() error {
	c.mu.Lock()
	*c.order = append(*c.order, c.name)
	c.mu.Unlock()
	return c.err
}

type readCloser struct {
	io.Reader
	closer
}

type writeCloser struct {
	io.Writer
	closer
}

// start runs a Conn on input (no more after it) and returns it with what it
// wrote.
func start(t *testing.T, input string, cfg Config) (*Conn, *syncbuf.Buffer) {
	t.Helper()
	var order []string
	var mu sync.Mutex
	out := &syncbuf.Buffer{}
	c := &Conn{}
	c.Start(readCloser{strings.NewReader(input), closer{"r", &order, &mu, nil}},
		writeCloser{out, closer{"w", &order, &mu, nil}}, cfg)
	t.Cleanup(func() { c.Close() })
	return c, out
}

// readAll reads until Read fails and returns the requests' methods and the
// error.
func readAll(t *testing.T, c *Conn) ([]string, error) {
	t.Helper()
	var got []string
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		m, err := c.Read(ctx)
		cancel()
		if err != nil {
			return got, err
		}
		got = append(got, m.(*jsonrpc.Request).Method)
	}
}

func req(method string) string {
	return `{"jsonrpc":"2.0","method":"` + method + `"}` + "\n"
}

func TestLinesConsumedAndPassed(t *testing.T) {
	t.Parallel()
	var seen []string
	// A consumed line is never decoded: "skip" would end the loop otherwise.
	c, out := start(t, req("a")+"\n  skip, not JSON \n"+req("b"), Config{
		MaxLine: 1 << 10,
		Line: func(line []byte) bool {
			seen = append(seen, string(line))
			return strings.Contains(string(line), "skip")
		},
	})
	got, err := readAll(t, c)
	if !errors.Is(err, io.EOF) || strings.Join(got, ",") != "a,b" {
		t.Errorf("read %q, %v; want a,b then EOF", got, err)
	}
	if len(seen) != 3 || seen[1] != "skip, not JSON" {
		t.Errorf("Line saw %q", seen)
	}
	if out.String() != "" {
		t.Errorf("wrote %q", out.String())
	}
}

func TestEndOfInput(t *testing.T) {
	t.Parallel()
	boom := errors.New("boom")
	for _, tc := range []struct {
		name  string
		r     io.Reader
		cfg   Config
		read  string
		want  error
		ended error // what End was given, if set
	}{
		{name: "eof", r: strings.NewReader(req("a")), read: "a", want: io.EOF},
		{name: "read error", r: io.MultiReader(strings.NewReader(req("a")), errReader{boom}), read: "a", want: boom},
		{name: "too long", r: strings.NewReader(req("a") + strings.Repeat("x", 200) + "\n" + req("b")), read: "a", want: lineio.ErrTooLong},
		{name: "mapped", r: strings.NewReader(strings.Repeat("x", 200)), want: boom, ended: lineio.ErrTooLong,
			cfg: Config{End: func(error) error { return boom }}},
		{name: "mapped to nil", r: errReader{boom}, want: io.EOF, ended: boom,
			cfg: Config{End: func(error) error { return nil }}},
		{name: "undecodable", r: strings.NewReader(req("a") + `{"jsonrpc":"1.0","method":"x"}` + "\n" + req("b")), read: "a", want: errAny},
		{name: "batch", r: strings.NewReader("[" + strings.TrimSpace(req("a")) + "," + strings.TrimSpace(req("b")) + "]\n[]\n"), read: "a,b", want: io.EOF,
			cfg: Config{Batches: true}},
		{name: "bad batch", r: strings.NewReader("[" + strings.TrimSpace(req("a")) + `,{"jsonrpc":"1.0"}]` + "\n" + req("b")), want: errAny,
			cfg: Config{Batches: true}},
		{name: "no batches", r: strings.NewReader("[" + strings.TrimSpace(req("a")) + "]\n" + req("b")), want: errAny},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := tc.cfg
			cfg.MaxLine = 100
			var ended error
			if end := cfg.End; end != nil {
				cfg.End = func(err error) error { ended = err; return end(err) }
			}
			c := &Conn{}
			c.Start(io.NopCloser(tc.r), nopWriteCloser{io.Discard}, cfg)
			defer c.Close()
			got, err := readAll(t, c)
			if strings.Join(got, ",") != tc.read {
				t.Errorf("read %q, want %q", got, tc.read)
			}
			if tc.want == errAny {
				if err == nil || errors.Is(err, io.EOF) {
					t.Errorf("err = %v, want a decoding error", err)
				}
			} else if err != tc.want {
				t.Errorf("err = %v, want %v", err, tc.want)
			}
			if cfg.End != nil && !errors.Is(ended, tc.ended) {
				t.Errorf("End got %v, want %v", ended, tc.ended)
			}
			// Read keeps reporting the same end.
			if _, err2 := c.Read(context.Background()); err2 != err {
				t.Errorf("second Read: %v, first %v", err2, err)
			}
		})
	}
}

var errAny = errors.New("any decoding error")

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

func TestInvalidKeepsReading(t *testing.T) {
	t.Parallel()
	var bad []string
	c, _ := start(t, `{"jsonrpc":"1.0","method":"x"}`+"\n"+req("a"), Config{
		MaxLine: 1 << 10,
		Invalid: func(line []byte, err error) {
			if err == nil {
				t.Error("Invalid without an error")
			}
			bad = append(bad, string(line))
		},
	})
	got, err := readAll(t, c)
	if !errors.Is(err, io.EOF) || strings.Join(got, ",") != "a" || len(bad) != 1 {
		t.Errorf("read %q, %v; invalid %q", got, err, bad)
	}
}

// blockedConn is a Conn whose read loop is blocked on an empty pipe; w fails
// to close with closeErr. order records the calls of Closing and the closes.
func blockedConn(t *testing.T, closeErr error) (c *Conn, order func() string) {
	pr, pw := io.Pipe() // never written
	t.Cleanup(func() { pw.Close() })
	var closes []string
	var mu sync.Mutex
	c = &Conn{}
	c.Start(readCloser{pr, closer{"r", &closes, &mu, nil}}, writeCloser{io.Discard, closer{"w", &closes, &mu, closeErr}},
		Config{MaxLine: 1 << 10, Closing: func() {
			mu.Lock()
			closes = append(closes, "closing")
			mu.Unlock()
		}})
	// The pipe's reader is closed by Close, which ends the read loop.
	return c, func() string {
		mu.Lock()
		defer mu.Unlock()
		return strings.Join(closes, ",")
	}
}

func TestCloseUnblocksRead(t *testing.T) {
	t.Parallel()
	closeErr := errors.New("close failed")
	c, order := blockedConn(t, closeErr)
	read := make(chan error, 1)
	go func() {
		_, err := c.Read(context.Background())
		read <- err
	}()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.Read(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Read with a done context: %v", err)
	}
	time.Sleep(20 * time.Millisecond) // let the Read above block
	if err := c.Close(); !errors.Is(err, closeErr) {
		t.Errorf("Close: %v", err)
	}
	select {
	case err := <-read:
		if err != io.EOF {
			t.Errorf("blocked Read: %v, want EOF", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Read still blocked after Close")
	}
	if _, err := c.Read(context.Background()); err != io.EOF {
		t.Errorf("Read after Close: %v", err)
	}
	if err := c.WriteLine([]byte("{}")); !errors.Is(err, io.ErrClosedPipe) {
		t.Errorf("WriteLine after Close: %v", err)
	}
	if err := c.Close(); !errors.Is(err, closeErr) {
		t.Errorf("second Close: %v", err)
	}
	if got := order(); got != "closing,w,r" {
		t.Errorf("close order %q, want Closing once, then w, then r", got)
	}
}

func TestCloseUnblocksPass(t *testing.T) {
	t.Parallel()
	c, _ := blockedConn(t, nil)
	passed := make(chan bool, 1)
	go func() { passed <- c.Pass([]byte(req("late"))) }() // nobody reads it
	time.Sleep(20 * time.Millisecond)
	if err := c.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	select {
	case ok := <-passed:
		if ok {
			t.Error("Pass reported a hand-over nobody read")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Pass still blocked after Close")
	}
	if c.Pass([]byte(req("later"))) {
		t.Error("Pass after Close succeeded")
	}
}

func TestPassAfterEnd(t *testing.T) {
	t.Parallel()
	c, _ := start(t, "", Config{MaxLine: 1 << 10})
	if _, err := c.Read(context.Background()); err != io.EOF {
		t.Fatalf("Read: %v", err)
	}
	// A message handed over after the input ended (a relayed call handed
	// back to the go-sdk) is read before the end is reported again: the
	// go-sdk stops reading at the first error.
	for i := 0; i < 8; i++ {
		go c.Pass([]byte(req("late")))
		time.Sleep(20 * time.Millisecond) // let Pass block
		m, err := c.Read(context.Background())
		if err != nil {
			t.Fatalf("round %d: Read: %v, want the late message", i, err)
		}
		if m.(*jsonrpc.Request).Method != "late" {
			t.Fatalf("read %v", m)
		}
	}
}

func TestWrite(t *testing.T) {
	t.Parallel()
	var written []jsonrpc.Message
	c, out := start(t, "", Config{MaxLine: 1 << 10, Written: func(m jsonrpc.Message) { written = append(written, m) }})
	id, _ := jsonrpc.MakeID(float64(7))
	if err := c.Write(context.Background(), &jsonrpc.Response{ID: id, Result: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	if err := c.WriteLine([]byte(`{"raw":1}`)); err != nil {
		t.Fatal(err)
	}
	if want := `{"jsonrpc":"2.0","id":7,"result":{}}` + "\n" + `{"raw":1}` + "\n"; out.String() != want {
		t.Errorf("wrote %q, want %q", out.String(), want)
	}
	if len(written) != 1 || c.SessionID() != "" {
		t.Errorf("Written saw %d messages", len(written))
	}
}
