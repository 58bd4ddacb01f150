package main

import (
	"bytes"
	"strings"
	"testing"
)

// benchOutput is two interleaved rounds of `go test -bench` output.
const benchOutput = `goos: linux
cpu: Test CPU
BenchmarkServeFloor1-2   	2000	1 ns/op	1000 calls/s	50 mid-cpu-µs/call	500 p50-µs
BenchmarkServeGateway1-2 	2000	1 ns/op	 990 calls/s	60 mid-cpu-µs/call	520 p50-µs
BenchmarkServeGatewayTel1-2 	2000	1 ns/op	 990 calls/s	100 mid-cpu-µs/call	520 p50-µs
BenchmarkPeersStdio8/direct-2 	2000	1 ns/op	2000 calls/s	 400 p50-µs
BenchmarkPeersStdio8/mcphost-2 	2000	1 ns/op	1800 calls/s	 100 mid-cpu-µs/call	35840 mid-RSS-KiB	 500 p50-µs
BenchmarkPeersStdio8/supergateway-2 	2000	1 ns/op	 600 calls/s	 900 mid-cpu-µs/call	143360 mid-RSS-KiB	1500 p50-µs
BenchmarkServeFloor1-2   	2000	1 ns/op	1000 calls/s	50 mid-cpu-µs/call	500 p50-µs
BenchmarkServeGateway1-2 	2000	1 ns/op	 890 calls/s	80 mid-cpu-µs/call	600 p50-µs
BenchmarkServeGatewayTel1-2 	2000	1 ns/op	 900 calls/s	100 mid-cpu-µs/call	600 p50-µs
BenchmarkPeersStdio8/direct-2 	2000	1 ns/op	2000 calls/s	 400 p50-µs
BenchmarkPeersStdio8/mcphost-2 	2000	1 ns/op	1800 calls/s	 100 mid-cpu-µs/call	35840 mid-RSS-KiB	 500 p50-µs
BenchmarkPeersStdio8/supergateway-2 	2000	1 ns/op	 600 calls/s	 900 mid-cpu-µs/call	143360 mid-RSS-KiB	1500 p50-µs
`

func TestReport(t *testing.T) {
	var out bytes.Buffer
	if err := run(strings.NewReader(benchOutput), &out); err != nil {
		t.Fatal(err)
	}
	report := out.String()
	for _, want := range []string{
		// p50 ratios 1.04 and 1.20: median 1.12, one round of two meets ≤ 1.05.
		"| stdio relay (2026-07-28) vs the floor, one caller: p50 | ServeGateway1 vs ServeFloor1 | ×1.12 | ×1.04–×1.20 | 1/2 | ≤ ×1.05 | **not met** |",
		// calls/s 0.99 and 0.89: median 0.94.
		"| the same: calls/s | ServeGateway1 vs ServeFloor1 | ×0.94 | ×0.89–×0.99 | 1/2 | ≥ ×0.97 | **not met** |",
		// CPU 1.2 and 1.6: median 1.4.
		"| the same: CPU of the middle per call | ServeGateway1 vs ServeFloor1 | ×1.40 | ×1.20–×1.60 | 1/2 | ≤ ×1.30 | **not met** |",
		// telemetry: +40 and +20 µs: median +30, met on the median, one round of two.
		"| the same: added CPU µs per call | ServeGatewayTel1 vs ServeGateway1 | +30 µs | +20 µs–+40 µs | 1/2 | ≤ 30 µs | met, inside the noise |",
		// peers: supergateway's p50 ×3 of mcphost's, mcphost's calls/s ×3, CPU ×9, RSS ×4.
		"| supergateway | 1500 | 600 | 900 | 140.0 | ×3.00 | ×3.00 | ×9.00 | ×4.00 |",
	} {
		if !strings.Contains(report, want) {
			t.Errorf("the report lacks\n%s\n%s", want, report)
		}
	}
}

func TestPerRound(t *testing.T) {
	for _, tc := range []struct {
		name       string
		path, base []float64
		diff       bool
		want       []float64
	}{
		{"ratios", []float64{2, 3}, []float64{1, 2}, false, []float64{2, 1.5}},
		{"differences", []float64{2, 3}, []float64{1, 2}, true, []float64{1, 1}},
		{"unequal counts: the ratio of the medians", []float64{2, 4, 6}, []float64{2}, false, []float64{2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := perRound(tc.path, tc.base, tc.diff)
			if len(got) != len(tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Fatalf("got %v, want %v", got, tc.want)
				}
			}
		})
	}
}
