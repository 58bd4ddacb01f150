package gateway_test

// BenchmarkTelemetryCost measures what telemetry adds to a relayed
// tools/call through a real gateway (the demo server a child process on
// stdio, the gateway in this process on its stdio front and on its HTTP
// front): one gateway with telemetry off and one with it on as `mcphost
// serve` runs it with a telemetry block — traces of every request sampled
// and metrics, both exported by OTLP/HTTP (the SDK's batch span processor
// and periodic reader, the OTLP exporters encoding every span and point) to
// a receiver on loopback, and a Prometheus registry — called in
// alternating blocks, so that drift falls on both alike. Speed is
// reported, as metrics of the same run, never asserted (issue 34's goal:
// on/off-p50 at most 1.05 and added-cpu-µs/call at most 30):
//
//	go test -run XXX -bench TelemetryCost -benchtime 4000x -count 3 ./host/gateway/
//
// p50-off-µs and p50-on-µs are the median latencies of one call written
// and its answer read by a raw client (lines on stdio, keep-alive POSTs in
// a 2025-11-25 session over HTTP), on/off-p50 their ratio. cpu-*-µs/call
// is this process's CPU time (getrusage: the gateway, its exporters and
// the client; the demo servers are other processes) per call, the
// exporters' work for the block's calls included (each "on" block ends
// with a flush of both signals); added-cpu-µs/call is the difference.
// allocs-*/call count the process's heap allocations per call.
// TELCOST_ONLY=off (or on) runs the blocks of that side only, to profile
// it alone (-cpuprofile, -memprofile).

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime/metrics"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/gateway"
	"github.com/mcphost/mcphost/host/gateway/streamable"
	"github.com/mcphost/mcphost/host/telemetry"
	"github.com/mcphost/mcphost/internal/testing/cputime"
)

// telCostBlock is how many calls a block makes on one side: enough for
// the batch span processor to export full batches (512 spans) within it,
// as it does in production, before the block's closing flush.
const telCostBlock = 500

// telCostMessage is what the echo tool is asked to echo.
const telCostMessage = "benchmark payload: the quick brown fox jumps over the lazy dog"

func BenchmarkTelemetryCost(b *testing.B) {
	for _, front := range []string{"stdio", "http"} {
		b.Run(front, func(b *testing.B) {
			cfg := func() *config.Config {
				return &config.Config{Servers: []*config.Server{demo("a")}, DefaultMode: "allow_all"}
			}
			sink := &otlpSink{}
			srv := httptest.NewServer(sink)
			b.Cleanup(srv.Close)
			tel := exportingTelemetry(b, srv.URL)
			sides := []*telCostSide{
				{name: "off", g: telGatewayOf(b, nil, cfg())},
				{name: "on", g: telGatewayOf(b, tel, cfg()), tel: tel},
			}
			for _, s := range sides {
				if front == "stdio" {
					s.call = stdioCaller(b, s.g)
				} else {
					s.call = httpCaller(b, s.g)
				}
				for range 50 { // warm: connections, caches, the first export
					s.call(b)
				}
				s.tel.ForceFlush(context.Background())
			}
			for _, s := range sides {
				s.lat = make([]time.Duration, 0, b.N)
			}
			b.ResetTimer()
			for done, round := 0, 0; done < b.N; round++ {
				n := min(telCostBlock, b.N-done)
				for j := range sides {
					sd := sides[(round+j)%len(sides)]
					if only := os.Getenv("TELCOST_ONLY"); only != "" && only != sd.name {
						continue
					}
					sd.block(b, n)
				}
				done += n
			}
			b.StopTimer()
			if sink.traces.Load() == 0 || sink.metrics.Load() == 0 {
				b.Fatalf("the receiver got %d trace and %d metric exports", sink.traces.Load(), sink.metrics.Load())
			}
			off, on := sides[0], sides[1]
			p50off, p50on := telCostP50(off.lat), telCostP50(on.lat)
			b.ReportMetric(p50off, "p50-off-µs")
			b.ReportMetric(p50on, "p50-on-µs")
			b.ReportMetric(p50on/p50off, "on/off-p50")
			if _, ok := cputime.Process(); ok {
				perCall := func(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) / float64(b.N) }
				b.ReportMetric(perCall(off.cpu), "cpu-off-µs/call")
				b.ReportMetric(perCall(on.cpu), "cpu-on-µs/call")
				b.ReportMetric(perCall(on.cpu-off.cpu), "added-cpu-µs/call")
			}
			b.ReportMetric(float64(off.allocs)/float64(b.N), "allocs-off/call")
			b.ReportMetric(float64(on.allocs)/float64(b.N), "allocs-on/call")
		})
	}
}

// telCostSide is one gateway of BenchmarkTelemetryCost and what its
// calls measured.
type telCostSide struct {
	name   string
	g      *gateway.Gateway
	tel    *telemetry.Telemetry // nil: off
	call   func(b *testing.B)
	lat    []time.Duration
	cpu    time.Duration
	allocs uint64
}

// block makes n calls on s, then flushes s's telemetry, and adds what
// that took to s's measurements. It fails unless every call was relayed.
func (s *telCostSide) block(b *testing.B, n int) {
	before := s.g.RelayedCalls()
	a0 := heapAllocs()
	c0, _ := cputime.Process()
	for range n {
		start := time.Now()
		s.call(b)
		s.lat = append(s.lat, time.Since(start))
	}
	if err := s.tel.ForceFlush(context.Background()); err != nil {
		b.Fatal(err)
	}
	c1, _ := cputime.Process()
	s.cpu += c1 - c0
	s.allocs += heapAllocs() - a0
	if got := s.g.RelayedCalls() - before; got != uint64(n) {
		b.Fatalf("%s: %d of %d calls relayed", s.name, got, n)
	}
}

// exportingTelemetry is telemetry as `mcphost serve` starts it for a
// block { otlp_endpoint = url, prometheus = true, sample_ratio = 1 }.
func exportingTelemetry(b *testing.B, url string) *telemetry.Telemetry {
	b.Helper()
	tel, err := telemetry.New(context.Background(), &telemetry.Options{
		OTLPEndpoint: url, Traces: true, Metrics: true, Prometheus: true, SampleRatio: 1,
		LookupEnv: func(string) (string, bool) { return "", false },
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { tel.Shutdown(context.Background()) })
	return tel
}

// otlpSink is an OTLP/HTTP receiver that reads each export and answers it
// with an empty success, counting the exports of each signal.
type otlpSink struct{ traces, metrics atomic.Int64 }

func (s *otlpSink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	switch r.URL.Path {
	case "/v1/traces":
		s.traces.Add(1)
	case "/v1/metrics":
		s.metrics.Add(1)
	}
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.WriteHeader(http.StatusOK)
}

// stdioCaller serves g on pipes, opens a 2025-11-25 session by hand and
// returns a call of the echo tool written and read as lines.
func stdioCaller(b *testing.B, g *gateway.Gateway) func(*testing.B) {
	w, r := servePipes(b, g)
	br := bufio.NewReader(r)
	if _, err := io.WriteString(w, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`+"\n"); err != nil {
		b.Fatal(err)
	}
	if resp, err := br.ReadBytes('\n'); err != nil || !bytes.Contains(resp, []byte(`"result"`)) {
		b.Fatal(err, string(resp))
	}
	if _, err := io.WriteString(w, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"); err != nil {
		b.Fatal(err)
	}
	line := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":"b","method":"tools/call","params":{"name":"mcp__a__echo","arguments":{"message":%q}}}`+"\n", telCostMessage)
	return func(b *testing.B) {
		if _, err := w.Write(line); err != nil {
			b.Fatal(err)
		}
		resp, err := br.ReadBytes('\n')
		if err != nil || !bytes.Contains(resp, []byte(telCostMessage)) {
			b.Fatal(err, string(resp))
		}
	}
}

// httpCaller serves g's HTTP front on loopback, opens a 2025-11-25 session
// and returns a call of the echo tool in it, a POST on a kept-alive
// connection.
func httpCaller(b *testing.B, g *gateway.Gateway) func(*testing.B) {
	srv := httptest.NewServer(streamable.New(g).Handler(nil))
	tr := http.DefaultTransport.(*http.Transport).Clone()
	client := &http.Client{Transport: tr}
	b.Cleanup(func() {
		tr.CloseIdleConnections()
		srv.CloseClientConnections()
		srv.Close()
	})
	var buf bytes.Buffer
	post := func(b *testing.B, body []byte, session string, status int, want string) *http.Response {
		req, err := http.NewRequest(http.MethodPost, srv.URL, bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
			req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		}
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		buf.Reset()
		_, err = buf.ReadFrom(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != status || !strings.Contains(buf.String(), want) {
			b.Fatalf("%v, status %d: %s", err, resp.StatusCode, buf.Bytes())
		}
		return resp
	}
	resp := post(b, []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`), "", http.StatusOK, `"result"`)
	session := resp.Header.Get("Mcp-Session-Id")
	if session == "" {
		b.Fatal("initialize opened no session")
	}
	post(b, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), session, http.StatusAccepted, "")
	body := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"mcp__a__echo","arguments":{"message":%q}}}`, telCostMessage)
	return func(b *testing.B) { post(b, body, session, http.StatusOK, telCostMessage) }
}

// heapAllocs is the number of heap allocations this process has made.
func heapAllocs() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:objects"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// telCostP50 is the median of lat, in microseconds.
func telCostP50(lat []time.Duration) float64 {
	if len(lat) == 0 {
		return 0
	}
	s := slices.Clone(lat)
	slices.Sort(s)
	return float64(s[len(s)/2]) / float64(time.Microsecond)
}
