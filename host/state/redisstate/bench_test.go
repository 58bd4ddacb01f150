package redisstate

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/mcphost/mcphost/host/ratelimit"
	"github.com/mcphost/mcphost/host/state"
	"github.com/mcphost/mcphost/internal/testing/testredis"
)

// The benchmarks time one request's use of the state, one request at a
// time, on Redis over loopback and on Local, and report the median and
// 99th percentile latencies (the goal: at most 100 µs per request that
// needs Redis).

func redisBackend(b *testing.B) state.Backend {
	srv := testredis.Start(b, testredis.Options{})
	return open(b, options(b, srv, ""))
}

func localBackend(b *testing.B) state.Backend {
	l, err := state.NewLocal(nil, filepath.Join(b.TempDir(), "pins.json"))
	if err != nil {
		b.Fatal(err)
	}
	return l
}

// timeEach runs op b.N times and reports the latency percentiles.
func timeEach(b *testing.B, op func() error) { timeEachAfter(b, 0, op) }

// timeEachAfter runs op b.N times, each after idling for gap (not timed),
// and reports the latency percentiles.
func timeEachAfter(b *testing.B, gap time.Duration, op func() error) {
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		if gap > 0 {
			time.Sleep(gap) // (the idle time measured: not a wait for a result)
		}
		start := time.Now()
		if err := op(); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds()), "p99-ns")
}

func benchGet(b *testing.B, s state.Backend) {
	ctx := context.Background()
	if err := s.Put(ctx, "sess:bench", make([]byte, 256), time.Hour); err != nil {
		b.Fatal(err)
	}
	timeEach(b, func() error {
		_, err := s.Get(ctx, "sess:bench")
		return err
	})
}

// benchRateLimit admits a request and releases it, with a rate and a
// concurrency limit (two round trips on Redis: Acquire, release), and with
// a rate only (one).
func benchRateLimit(b *testing.B, s state.Backend) {
	ctx := context.Background()
	for _, tt := range []struct {
		name string
		o    ratelimit.Options
	}{
		{"RateAndConcurrency", ratelimit.Options{Rate: 1e9, MaxConcurrent: 1000}},
		{"RateOnly", ratelimit.Options{Rate: 1e9}},
	} {
		b.Run(tt.name, func(b *testing.B) {
			l := s.RateLimiter("bench-"+tt.name, tt.o)
			timeEach(b, func() error {
				release, _, _, err := l.Acquire(ctx, "alice")
				if err == nil {
					release()
				}
				return err
			})
		})
	}
}

// benchLease takes a lease and gives it back.
func benchLease(b *testing.B, s state.Backend) {
	ctx := context.Background()
	timeEach(b, func() error {
		release, err := s.Lease(ctx, "refresh:bench", time.Minute)
		if err == nil {
			release()
		}
		return err
	})
}

func BenchmarkRedisGet(b *testing.B)       { benchGet(b, redisBackend(b)) }
func BenchmarkLocalGet(b *testing.B)       { benchGet(b, localBackend(b)) }
func BenchmarkRedisRateLimit(b *testing.B) { benchRateLimit(b, redisBackend(b)) }
func BenchmarkLocalRateLimit(b *testing.B) { benchRateLimit(b, localBackend(b)) }
func BenchmarkRedisLease(b *testing.B)     { benchLease(b, redisBackend(b)) }
func BenchmarkLocalLease(b *testing.B)     { benchLease(b, localBackend(b)) }

// BenchmarkRedisRoundTripAfterIdle times one GET after both processes
// idled for a while, as a gateway's request finds Redis between requests:
// the same GET over a plain socket, written and read by hand (no client
// library: the floor), and through the backend (go-redis). On a virtual
// machine whose idle CPUs halt, waking the two processes costs more than
// Redis's own work; this is the part of "what Redis adds to a request"
// that no client can remove.
func BenchmarkRedisRoundTripAfterIdle(b *testing.B) {
	srv := testredis.Start(b, testredis.Options{})
	be := open(b, options(b, srv, ""))
	ctx := context.Background()
	if err := be.Put(ctx, "sess:bench", make([]byte, 256), time.Hour); err != nil {
		b.Fatal(err)
	}
	for _, gap := range []time.Duration{0, time.Millisecond, 10 * time.Millisecond} {
		b.Run("idle="+gap.String(), func(b *testing.B) {
			b.Run("socket", func(b *testing.B) {
				c, err := net.Dial("tcp", srv.Addr())
				if err != nil {
					b.Fatal(err)
				}
				defer c.Close()
				r := bufio.NewReader(c)
				key := be.key("kv:", "sess:bench")
				get := fmt.Appendf(nil, "*2\r\n$3\r\nGET\r\n$%d\r\n%s\r\n", len(key), key)
				reply := make([]byte, len("$256\r\n")+256+2)
				timeEachAfter(b, gap, func() error {
					if _, err := c.Write(get); err != nil {
						return err
					}
					if _, err := io.ReadFull(r, reply); err != nil {
						return err
					}
					if !bytes.HasPrefix(reply, []byte("$256\r\n")) {
						return fmt.Errorf("unexpected reply %q", reply[:8])
					}
					return nil
				})
			})
			b.Run("backend", func(b *testing.B) {
				timeEachAfter(b, gap, func() error {
					_, err := be.Get(ctx, "sess:bench")
					return err
				})
			})
		})
	}
}
