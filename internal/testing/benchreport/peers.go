package main

import (
	"fmt"
	"io"
	"sort"
	"strings"
)

// peerGroups are the peer benchmarks of test/bench (peers_test.go): one
// sub-benchmark per gateway, and "direct" (the client calling the server).
var peerGroups = []struct{ bench, title string }{
	{"PeersStdio8", "client → gateway (streamable HTTP in front) → stdio echo server, 8 concurrent callers"},
	{"PeersStdio1", "the same, one caller"},
	{"PeersHTTP8", "client → gateway (streamable HTTP in front) → echo server over streamable HTTP, 8 concurrent callers"},
	{"PeersHTTP1", "the same, one caller"},
}

// writePeers writes section (n): mcphost against the gateways users pick
// instead, on the same path in the same rounds, and mcphost's lead over
// each (per-round ratios: the peer's p50, CPU and RSS over mcphost's, and
// mcphost's calls/s over the peer's — above ×1 is a lead).
func writePeers(w io.Writer, samples map[string]map[string][]float64) {
	wrote := false
	for _, g := range peerGroups {
		ours := samples[g.bench+"/mcphost"]
		if len(ours) == 0 {
			continue
		}
		var peers []string
		for name := range samples {
			if p, ok := strings.CutPrefix(name, g.bench+"/"); ok && p != "mcphost" && p != "direct" {
				peers = append(peers, p)
			}
		}
		if len(peers) == 0 {
			continue
		}
		sort.Strings(peers)
		if !wrote {
			fmt.Fprintf(w, "## (n) mcphost and the gateways users pick instead\n\n")
			fmt.Fprintf(w, "Each peer runs in the same rounds as mcphost, installed by `scripts/bench-peers.sh` at pinned versions; a go-sdk client (2025-11-25, with a session) calls the demo server's echo tool through it. CPU and RSS are the gateway process's own (its demo server apart). mcphost's lead: the peer's p50, CPU per call and RSS over mcphost's, mcphost's calls/s over the peer's, as the median of the per-round ratios: above ×1 mcphost leads.\n\n")
			wrote = true
		}
		fmt.Fprintf(w, "### %s\n\n| gateway | p50 µs | calls/s | CPU µs/call | RSS MiB | lead on p50 | lead on calls/s | lead on CPU | lead on RSS |\n|---|---|---|---|---|---|---|---|---|\n", g.title)
		if d := samples[g.bench+"/direct"]; len(d) > 0 {
			fmt.Fprintf(w, "| (direct) | %.0f | %.0f | - | - | - | - | - | - |\n", median(d["p50-µs"]), median(d["calls/s"]))
		}
		fmt.Fprintf(w, "| **mcphost** | %.0f | %.0f | %.0f | %.1f | - | - | - | - |\n", median(ours["p50-µs"]), median(ours["calls/s"]), median(ours[midCPU]), median(ours["mid-RSS-KiB"])/1024)
		for _, p := range peers {
			m := samples[g.bench+"/"+p]
			lead := func(metric string, oursOver bool) string {
				if len(m[metric]) == 0 || len(ours[metric]) == 0 {
					return "n/a"
				}
				if oursOver {
					return fmt.Sprintf("×%.2f", pairedRatio(ours[metric], m[metric]))
				}
				return fmt.Sprintf("×%.2f", pairedRatio(m[metric], ours[metric]))
			}
			fmt.Fprintf(w, "| %s | %.0f | %.0f | %.0f | %.1f | %s | %s | %s | %s |\n", p, median(m["p50-µs"]), median(m["calls/s"]), median(m[midCPU]), median(m["mid-RSS-KiB"])/1024,
				lead("p50-µs", false), lead("calls/s", true), lead(midCPU, false), lead("mid-RSS-KiB", false))
		}
		fmt.Fprintln(w)
	}
	if wrote {
		fmt.Fprintf(w, "Not run: TBXark/mcp-proxy (the Go module proxy reachable here does not serve it); ToolHive's container-based `thv run` and group discovery (no container runtime here: vmcp runs with a static backend). See test/bench/NOTES.md.\n\n")
	}
}
