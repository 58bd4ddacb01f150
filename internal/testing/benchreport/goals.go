package main

import (
	"fmt"
	"io"
	"sort"
)

// speedGoal is one of issue 34's (or 36's) speed goals, checked on the benchmarks of
// one interleaved run: the median over the rounds of path's metric against
// base's (their per-round ratio, or their per-round difference).
type speedGoal struct {
	what       string // the goal's path, in words
	path, base string // benchmarks (path may equal base: two metrics of one)
	metric     string
	baseMetric string // base's metric, when not metric
	diff       bool   // path − base (else path / base)
	lower      bool   // lower is better: the value must be ≤ limit (else ≥)
	limit      float64
}

// speedGoals are issue 34's goals, for 8 concurrent callers and for one
// caller (sequential calls), both protocol eras on stdio, then issue 36's
// (the cost of hooks and interceptors).
var speedGoals = []speedGoal{
	{"`serve --http` (2025-11-25 client) vs direct HTTP, 8 callers: calls/s", "HTTPGateway8", "HTTPDirect8", "calls/s", "", false, false, 0.95},
	{"the same: p50", "HTTPGateway8", "HTTPDirect8", "p50-µs", "", false, true, 1.15},
	{"the same: gateway CPU per call vs the upstream server's", "HTTPGateway8", "HTTPGateway8", midCPU, srvCPU, false, true, 1},
	{"`serve --http` vs direct HTTP, one caller: calls/s", "HTTPGateway1", "HTTPDirect1", "calls/s", "", false, false, 0.95},
	{"the same: p50", "HTTPGateway1", "HTTPDirect1", "p50-µs", "", false, true, 1.15},
	{"the same: gateway CPU per call vs the upstream server's", "HTTPGateway1", "HTTPGateway1", midCPU, srvCPU, false, true, 1},

	{"stdio relay (2026-07-28) vs the byte-copy floor, 8 callers: p50", "ServeGateway8", "ServeFloor8", "p50-µs", "", false, true, 1.05},
	{"the same: calls/s", "ServeGateway8", "ServeFloor8", "calls/s", "", false, false, 0.97},
	{"the same: CPU of the middle per call", "ServeGateway8", "ServeFloor8", midCPU, "", false, true, 1.3},
	{"stdio relay (2025-11-25) vs the floor, 8 callers: p50", "ServeGatewayOld8", "ServeFloorOld8", "p50-µs", "", false, true, 1.05},
	{"the same: calls/s", "ServeGatewayOld8", "ServeFloorOld8", "calls/s", "", false, false, 0.97},
	{"the same: CPU of the middle per call", "ServeGatewayOld8", "ServeFloorOld8", midCPU, "", false, true, 1.3},
	{"stdio relay (2026-07-28) vs the floor, one caller: p50", "ServeGateway1", "ServeFloor1", "p50-µs", "", false, true, 1.05},
	{"the same: calls/s", "ServeGateway1", "ServeFloor1", "calls/s", "", false, false, 0.97},
	{"the same: CPU of the middle per call", "ServeGateway1", "ServeFloor1", midCPU, "", false, true, 1.3},
	{"stdio relay (2025-11-25) vs the floor, one caller: p50", "ServeGatewayOld1", "ServeFloorOld1", "p50-µs", "", false, true, 1.05},
	{"the same: calls/s", "ServeGatewayOld1", "ServeFloorOld1", "calls/s", "", false, false, 0.97},
	{"the same: CPU of the middle per call", "ServeGatewayOld1", "ServeFloorOld1", midCPU, "", false, true, 1.3},

	{"telemetry on vs off, stdio, 8 callers: p50", "ServeGatewayTel8", "ServeGateway8", "p50-µs", "", false, true, 1.05},
	{"the same: added CPU µs per call", "ServeGatewayTel8", "ServeGateway8", midCPU, "", true, true, 30},
	{"telemetry on vs off, stdio, one caller: p50", "ServeGatewayTel1", "ServeGateway1", "p50-µs", "", false, true, 1.05},
	{"the same: added CPU µs per call", "ServeGatewayTel1", "ServeGateway1", midCPU, "", true, true, 30},
	{"telemetry on vs off, `serve --http`, 8 callers: p50", "HTTPGatewayTel8", "HTTPGateway8", "p50-µs", "", false, true, 1.05},
	{"the same: added CPU µs per call", "HTTPGatewayTel8", "HTTPGateway8", midCPU, "", true, true, 30},
	{"telemetry on vs off, `serve --http`, one caller: p50", "HTTPGatewayTel1", "HTTPGateway1", "p50-µs", "", false, true, 1.05},
	{"the same: added CPU µs per call", "HTTPGatewayTel1", "HTTPGateway1", midCPU, "", true, true, 30},

	{"HTTP upstream (client → `serve --http` → streamable HTTP server, 2026-07-28) vs direct, 8 callers: calls/s", "HTTPUpstream8", "HTTPDirectNew8", "calls/s", "", false, false, 0.85},
	{"the same: gateway CPU per call vs the upstream server's", "HTTPUpstream8", "HTTPUpstream8", midCPU, srvCPU, false, true, 1},
	{"HTTP upstream vs direct, one caller: calls/s", "HTTPUpstream1", "HTTPDirectNew1", "calls/s", "", false, false, 0.85},
	{"the same: gateway CPU per call vs the upstream server's", "HTTPUpstream1", "HTTPUpstream1", midCPU, srvCPU, false, true, 1},

	// Issue 36: hooks and interceptors, one caller.
	{"checks configured that match none of the calls vs none configured, stdio, one caller: p50", "ServeGatewayCheckNone1", "ServeGateway1", "p50-µs", "", false, true, 1.03},
	{"validate_input on every call, stdio, one caller: added p50", "ServeGatewayValidate1", "ServeGateway1", "p50-µs", "", true, true, 20},
	{"validate_input on every call, `serve --http`, one caller: added p50", "HTTPGatewayValidate1", "HTTPGateway1", "p50-µs", "", true, true, 20},
	{"the guard-regex plugin on both phases of every call, stdio, one caller: added p50", "ServeGatewayGuard1", "ServeGateway1", "p50-µs", "", true, true, 200},
	{"the secrets built-in on both phases of every call, stdio, one caller: added p50 (expected, not a goal of the issue)", "ServeGatewaySecrets1", "ServeGateway1", "p50-µs", "", true, true, 20},
}

// writeGoals writes the table of issue 34's speed goals: the median of the
// per-round values, the spread of the rounds, how many rounds met the goal,
// and the verdict on the median.
func writeGoals(w io.Writer, samples map[string]map[string][]float64) {
	var rows []string
	for _, g := range speedGoals {
		bm := g.metric
		if g.baseMetric != "" {
			bm = g.baseMetric
		}
		p, b := samples[g.path][g.metric], samples[g.base][bm]
		if len(p) == 0 || len(b) == 0 {
			continue
		}
		per := perRound(p, b, g.diff)
		v := median(per)
		ok := func(x float64) bool {
			if g.lower {
				return x <= g.limit
			}
			return x >= g.limit
		}
		n := 0
		for _, x := range per {
			if ok(x) {
				n++
			}
		}
		op := map[bool]string{true: "≤", false: "≥"}[g.lower]
		format := func(x float64) string {
			if g.diff {
				return fmt.Sprintf("%+.0f µs", x)
			}
			return fmt.Sprintf("×%.2f", x)
		}
		limit := fmt.Sprintf("×%.2f", g.limit)
		if g.diff {
			limit = fmt.Sprintf("%.0f µs", g.limit)
		}
		sorted := append([]float64(nil), per...)
		sort.Float64s(sorted)
		verdict := map[bool]string{true: "met", false: "**not met**"}[ok(v)]
		if ok(v) && n*4 < len(per)*3 {
			verdict = "met, inside the noise"
		}
		versus := g.path + " vs " + g.base
		if g.path == g.base {
			versus = g.path + ": " + g.metric + " vs " + bm
		}
		rows = append(rows, fmt.Sprintf("| %s | %s | %s | %s–%s | %d/%d | %s %s | %s |", g.what, versus, format(v),
			format(sorted[0]), format(sorted[len(sorted)-1]), n, len(per), op, limit, verdict))
	}
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(w, "## Issue 34's speed goals\n\n")
	fmt.Fprintf(w, "Each value is the median over the rounds of the per-round ratio (or difference) of the two benchmarks, which ran in the same round; the range is the rounds' lowest and highest; a goal met on the median but by fewer than three rounds in four is marked as inside the noise. \"8 callers\" is 8 concurrent callers on one session; \"one caller\" is sequential calls. CPU is user + system time of the process from /proc/PID/stat (10 ms ticks) over the timed calls, divided by the calls.\n\n")
	fmt.Fprintf(w, "| goal | benchmarks | median | rounds' range | rounds meeting it | limit | verdict |\n|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintln(w, r)
	}
	fmt.Fprintln(w)
}

// perRound is path[i]/base[i] (or path[i]−base[i]) for each round; with
// unequal counts, the one value of the medians.
func perRound(path, base []float64, diff bool) []float64 {
	if len(path) != len(base) {
		if diff {
			return []float64{median(path) - median(base)}
		}
		return []float64{median(path) / median(base)}
	}
	out := make([]float64, len(path))
	for i := range path {
		if diff {
			out[i] = path[i] - base[i]
		} else {
			out[i] = path[i] / base[i]
		}
	}
	return out
}

// writeRelayAllocs writes what one relayed call allocates in the gateway
// (BenchmarkRelayStdio and BenchmarkRelayStdioRaw in host/gateway, in
// process with -benchmem), and the bytes that pass through the process in
// the middle per call (read and written by system calls, both ways).
func writeRelayAllocs(w io.Writer, samples map[string]map[string][]float64) {
	raw, sdk := samples["RelayStdioRaw"], samples["RelayStdio"]
	if len(raw) == 0 && len(sdk) == 0 {
		return
	}
	fmt.Fprintf(w, "## (m) allocations per relayed call, and bytes per call\n\n| benchmark | allocs/op | B/op | ns/op |\n|---|---|---|---|\n")
	for _, r := range []struct {
		name string
		m    map[string][]float64
	}{{"`BenchmarkRelayStdioRaw` (host/gateway): the gateway and its upstream connection only (request written and response read as lines)", raw},
		{"`BenchmarkRelayStdio` (host/gateway): the same with a go-sdk client in the process", sdk}} {
		if len(r.m) > 0 {
			fmt.Fprintf(w, "| %s | %.0f | %.0f | %.0f |\n", r.name, median(r.m["allocs/op"]), median(r.m["B/op"]), median(r.m["ns/op"]))
		}
	}
	fmt.Fprintf(w, "\nBytes read and written by the process in the middle per call (rchar + wchar of /proc/PID/io: the request and the response, in and out):\n\n| benchmark | B/call |\n|---|---|\n")
	for _, b := range []string{"ServeFloor8", "ServeGateway8", "ServeGatewayOld8", "ServeGateway1", "HTTPGateway8", "HTTPUpstream8"} {
		if v := samples[b]["mid-io-B/call"]; len(v) > 0 {
			fmt.Fprintf(w, "| %s | %.0f |\n", b, median(v))
		}
	}
	fmt.Fprintln(w)
}
