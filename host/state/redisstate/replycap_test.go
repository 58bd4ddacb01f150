package redisstate

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// hostileRedis is a server on 127.0.0.1 that speaks enough RESP2 for a
// go-redis client to connect (PING, and an error for HELLO and the other
// commands of a connection's setup), and answers every GET with reply.
// A real redis-server cannot be made to announce a value it does not have:
// this is what a hostile server, or one in the middle of a redis://
// connection, can send. (BLPOP too, whose reply is an array.)
func hostileRedis(t *testing.T, reply string) string {
	t.Helper()
	return hostileServer(t, func(args []string) string {
		switch strings.ToUpper(args[0]) {
		case "PING":
			return "+PONG\r\n"
		case "GET", "BLPOP":
			return reply
		}
		return "-ERR unknown command\r\n"
	})
}

// hostileServer is a server on 127.0.0.1 that answers each command with
// what answer returns for it (nothing for "").
func hostileServer(t *testing.T, answer func(args []string) string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Go(func() {
				defer c.Close()
				r := bufio.NewReader(c)
				for {
					args, err := readCommand(r)
					if err != nil {
						return
					}
					if _, err := io.WriteString(c, answer(args)); err != nil {
						return
					}
				}
			})
		}
	})
	return "redis://" + ln.Addr().String()
}

// readCommand reads one RESP array of bulk strings (a client's command).
func readCommand(r *bufio.Reader) ([]string, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return nil, err
	}
	n, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "*")))
	if err != nil || n < 1 || n > 64 {
		return nil, errors.New("not a command")
	}
	args := make([]string, n)
	for i := range args {
		line, err := r.ReadString('\n')
		if err != nil {
			return nil, err
		}
		l, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "$")))
		if err != nil || l < 0 || l > 1<<20 {
			return nil, errors.New("not a command")
		}
		b := make([]byte, l+2)
		if _, err := io.ReadFull(r, b); err != nil {
			return nil, err
		}
		args[i] = string(b[:l])
	}
	return args, nil
}

// TestHostileReplyIsCapped checks that a reply announcing more than the
// cap fails its call at once, without go-redis allocating what it
// announces, and that replies within the cap are read.
func TestHostileReplyIsCapped(t *testing.T) {
	const limit = 1 << 20
	nested := strings.Repeat("*100000\r\n", 3)
	deep := strings.Repeat("*1\r\n", maxDepth+1)
	tests := []struct {
		name  string
		pop   bool // call Pop (an array reply), not Get
		reply string
		want  string // the value returned; "" for ErrReplyTooLarge
	}{
		{"huge bulk", false, "$2000000000\r\n", ""},
		{"bulk just over the cap", false, "$" + strconv.Itoa(limit+1) + "\r\n", ""},
		{"huge array", true, "*50000000\r\n", ""},
		{"huge map", true, "%50000000\r\n", ""},
		{"arrays nested, each announcing 100,000", true, nested, ""},
		{"arrays nested too deep", true, deep, ""},
		{"a line without end", false, "+" + strings.Repeat("a", maxLineBytes+1), ""},
		{"a length that is not a number", false, "$12x\r\n", ""},
		{"an unknown type", false, "?\r\n", ""},
		{"a value at the cap", false, "$" + strconv.Itoa(limit) + "\r\n" + strings.Repeat("v", limit) + "\r\n", strings.Repeat("v", limit)},
		{"a small value", false, "$5\r\nhello\r\n", "hello"},
		{"a popped value", true, "*2\r\n$1\r\nk\r\n$5\r\nhello\r\n", "hello"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := Options{URL: hostileRedis(t, tt.reply), TokenBox: tokenBox(), PinBox: pinBox(), MaxReplyBytes: limit}
			b := open(t, o)
			ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
			defer cancel()
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			start := time.Now()
			var v []byte
			var err error
			if tt.pop {
				v, err = b.Pop(ctx, "k", time.Second)
			} else {
				v, err = b.Get(ctx, "k")
			}
			elapsed := time.Since(start)
			runtime.ReadMemStats(&after)
			alloc := after.TotalAlloc - before.TotalAlloc
			t.Logf("the call allocated %d KiB in %s", alloc>>10, elapsed)
			if alloc > 64<<20 {
				t.Errorf("the call allocated %d MiB", alloc>>20)
			}
			if tt.want != "" {
				if err != nil || string(v) != tt.want {
					t.Fatalf("got %d bytes, %v; want %d bytes", len(v), err, len(tt.want))
				}
				return
			}
			if !errors.Is(err, ErrReplyTooLarge) {
				t.Fatalf("got %d bytes, %v; want ErrReplyTooLarge", len(v), err)
			}
			if elapsed > time.Second {
				t.Errorf("the call failed after %s, want at once", elapsed)
			}
			// The connection is dropped; the next call makes another.
			if err := b.Ping(ctx); err != nil {
				t.Errorf("Ping after the refused reply: %v", err)
			}
		})
	}
	t.Run("a Pub/Sub reply cut by a read timeout", func(t *testing.T) { hostilePubSub(t, limit) })
}

// hostilePubSub is the case of TestHostileReplyIsCapped on the Pub/Sub
// connection, whose reads time out when the channels are quiet: the server
// confirms the subscription and sends a message's header and its payload's
// announcement (100 bytes), and then nothing until the PING that the quiet
// makes the client send, which it answers with an announcement of 200 MB.
// go-redis keeps a Pub/Sub connection whose read timed out, and parses
// what comes next as a new reply: the connection must rather be dropped,
// as the scanner counts those bytes as the cut payload.
func hostilePubSub(t *testing.T, limit int64) {
	var pings atomic.Int32
	var subscribed atomic.Bool // (New's PING is answered)
	url := hostileServer(t, func(args []string) string {
		switch strings.ToUpper(args[0]) {
		case "SUBSCRIBE":
			subscribed.Store(true)
			ch := args[1]
			head := "$" + strconv.Itoa(len(ch)) + "\r\n" + ch + "\r\n"
			return "*3\r\n$9\r\nsubscribe\r\n" + head + ":1\r\n" +
				"*3\r\n$7\r\nmessage\r\n" + head + "$100\r\n"
		case "PING":
			if !subscribed.Load() {
				return "+PONG\r\n"
			}
			pings.Add(1)
			return "$200000000\r\n"
		}
		return "-ERR unknown command\r\n"
	})
	b := open(t, Options{URL: url, TokenBox: tokenBox(), PinBox: pinBox(), MaxReplyBytes: limit})
	b.ps.pingEvery = 50 * time.Millisecond
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	cancel := b.Subscribe("ch", func([]byte) {})
	defer cancel()
	// Each connection is cut inside a reply by a timeout: with the fix at
	// once made again, on the old code after a PING and its reply.
	waitFor(t, "three connections cut", func() bool { return b.ps.conns.Load() >= 4 })
	runtime.ReadMemStats(&after)
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("three connections cut allocated %d KiB; %d PINGs answered", alloc>>10, pings.Load())
	if alloc > 64<<20 {
		t.Errorf("three connections cut allocated %d MiB", alloc>>20)
	}
	if n := pings.Load(); n != 0 {
		t.Errorf("%d PINGs on connections cut inside a reply, want none: the connection must be dropped", n)
	}
}

// TestReplyScannerChunks checks that the scanner follows replies however
// the stream is cut into reads, and accepts what a server sends.
func TestReplyScannerChunks(t *testing.T) {
	stream := "+OK\r\n-ERR x\r\n:12\r\n$-1\r\n*-1\r\n_\r\n,1.5\r\n#t\r\n(123\r\n" +
		"$3\r\nabc\r\n*2\r\n$1\r\na\r\n*0\r\n%1\r\n+k\r\n*1\r\n:1\r\n" +
		"|1\r\n+ttl\r\n:3\r\n$2\r\nhi\r\n>3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$0\r\n\r\n" +
		"~2\r\n+a\r\n+b\r\n=7\r\ntxt:abc\r\n!3\r\nerr\r\n"
	for _, size := range []int{1, 2, 3, 7, len(stream)} {
		s := replyScanner{maxBytes: 1 << 10}
		for i := 0; i < len(stream); i += size {
			if err := s.scan([]byte(stream[i:min(i+size, len(stream))])); err != nil {
				t.Fatalf("reads of %d bytes: %v", size, err)
			}
		}
		if len(s.stack) != 0 || s.pending != 0 || s.state != scanType || s.replyLen != 0 {
			t.Errorf("reads of %d bytes: the scanner ends inside a reply: %+v", size, s)
		}
	}
}

// FuzzReplyScanner checks that the scanner never panics, keeps its
// accounts, and decides alike whether a stream comes in one read or byte
// by byte.
func FuzzReplyScanner(f *testing.F) {
	for _, seed := range []string{"+OK\r\n", "$3\r\nabc\r\n", "*2\r\n:1\r\n$-1\r\n", "%1\r\n+a\r\n+b\r\n",
		"|1\r\n+a\r\n+b\r\n:1\r\n", "$2000000000\r\n", "*99999999\r\n", "\x00\xff{}", "$-\r\n", "*1\r\n*1\r\n*1\r\n"} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, p []byte) {
		whole := replyScanner{maxBytes: 1 << 12}
		errWhole := whole.scan(p)
		bytewise := replyScanner{maxBytes: 1 << 12}
		var errBytes error
		for i := range p {
			if errBytes = bytewise.scan(p[i : i+1]); errBytes != nil {
				break
			}
		}
		if (errWhole == nil) != (errBytes == nil) {
			t.Fatalf("in one read: %v; byte by byte: %v", errWhole, errBytes)
		}
		if errWhole != nil && !errors.Is(errWhole, ErrReplyTooLarge) {
			t.Fatalf("error %v is not ErrReplyTooLarge", errWhole)
		}
		if whole.pending < 0 || whole.pending > maxPendingElements || len(whole.stack) > maxDepth {
			t.Fatalf("accounts: pending %d, depth %d", whole.pending, len(whole.stack))
		}
	})
}
