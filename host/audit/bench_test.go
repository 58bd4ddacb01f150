package audit

import (
	"context"
	"io"
	"runtime"
	"testing"
	"time"
)

var benchRecord = Record{
	Time: t0, Event: EventToolCall, Issuer: "https://idp.example.com", Subject: "alice",
	Session: "5e884898da280471", Server: "github", Tool: "mcp__github__create_issue",
	Decision: DecisionAllow, Rule: "user scope, /etc/mcphost/config.hcl:12 allow mcp__github__*",
	Outcome: OutcomeOK, Duration: 182500 * time.Microsecond, RequestBytes: 311, ResponseBytes: 1204,
	Remote: "192.0.2.7:51234",
}

// BenchmarkWrite is the cost on the call path of queueing one record.
// "kept": the writer goroutine drains to io.Discard, and the benchmark
// pauses (untimed) every 1024 records until it has, so that nothing is
// dropped; "kept_zero_time": the same for a record without a time;
// "full": the writer is stuck and every record is dropped. dropped/op says
// how many were.
func BenchmarkWrite(b *testing.B) {
	b.Run("kept", func(b *testing.B) { benchKept(b, &benchRecord) })
	b.Run("kept_zero_time", func(b *testing.B) {
		r := benchRecord
		r.Time = time.Time{} // Write reads the clock
		benchKept(b, &r)
	})
	b.Run("full", func(b *testing.B) {
		gate := make(chan struct{})
		l := New(writerFunc(func(p []byte) (int, error) { <-gate; return len(p), nil }), &Options{Buffer: 16})
		b.ReportAllocs()
		for b.Loop() {
			l.Write(&benchRecord)
		}
		b.StopTimer()
		close(gate)
		l.Close(context.Background())
		b.ReportMetric(float64(l.Dropped())/float64(b.N), "dropped/op")
	})
}

// BenchmarkWriteParallel is BenchmarkWrite/kept from GOMAXPROCS
// goroutines, with the writer draining as it can: dropped/op says how
// often it could not keep up.
func BenchmarkWriteParallel(b *testing.B) {
	l := New(io.Discard, nil)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			l.Write(&benchRecord)
		}
	})
	b.StopTimer()
	l.Close(context.Background())
	b.ReportMetric(float64(l.Dropped())/float64(b.N), "dropped/op")
}

// drain waits until the writer has taken everything queued.
func drain(l *Log) {
	for {
		l.mu.Lock()
		n := len(l.queue)
		l.mu.Unlock()
		if n == 0 {
			return
		}
		runtime.Gosched()
	}
}

func benchKept(b *testing.B, r *Record) {
	l := New(io.Discard, nil)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		l.Write(r)
		if i++; i%1024 == 0 {
			b.StopTimer()
			drain(l)
			b.StartTimer()
		}
	}
	b.StopTimer()
	l.Close(context.Background())
	b.ReportMetric(float64(l.Dropped())/float64(b.N), "dropped/op")
}

// BenchmarkEncode is the writer goroutine's cost per record.
func BenchmarkEncode(b *testing.B) {
	var buf []byte
	b.ReportAllocs()
	for b.Loop() {
		buf = appendRecord(buf[:0], &benchRecord)
	}
	b.SetBytes(int64(len(buf)))
}
