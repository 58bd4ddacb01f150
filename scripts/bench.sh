#!/usr/bin/env bash
# Runs the benchmarks and writes BENCHMARKS.md (ratios against the direct
# path and the floors, and issue 34's speed goals, measured in the same
# run). The runs are interleaved — BENCH_ROUNDS rounds (default 7; COUNT is
# the old name), each running every gateway benchmark once — so that a slow
# spell of the shared machine hits both sides of a ratio alike. Each round
# runs, in one process each:
#   - 8 concurrent callers on one session (BENCHTIME calls, default 4000x:
#     8 × 500), the stdio and HTTP fronts, both protocol eras;
#   - one caller, sequential calls (SEQ_BENCHTIME, default 2000x): the
#     hop's own latency and CPU, which 8 callers partly hide;
#   - the peers (scripts/bench-peers.sh installs them; PEERS_BENCHTIME,
#     default 2000x with 8 callers, PEERS_SEQ_BENCHTIME 500x with one).
# BENCH_QUICK=1 runs only those (no plugin start, decoding, permissions,
# tool search, OAuth, scale-out). BENCH_PEERS=0 leaves the peers out.
# BENCH_OUT names the report (default BENCHMARKS.md); the raw output is
# kept in bin/bench-raw.txt. BENCH_CPUPROFILE_DIR=DIR writes a CPU profile
# of every gateway process to DIR/<benchmark>.prof (go tool pprof).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${BENCH_ROUNDS:-${COUNT:-7}}
quick=${BENCH_QUICK:-0}
report=${BENCH_OUT:-BENCHMARKS.md}
out=$(mktemp)
trap 'rm -f "$out" "$out.test" "$out.scaleout"' EXIT
go test -c -o "$out.test" ./test/bench
if [ "${BENCH_PEERS:-1}" != 0 ]; then
  ./scripts/bench-peers.sh || echo "bench: some peers are not installed; their benchmarks skip" >&2
fi
bench() { (cd test/bench && "$out.test" -test.run='^$' -test.bench="$1" -test.benchtime="$2") | tee -a "$out"; }
for i in $(seq "$rounds"); do
  echo "# round $i of $rounds" | tee -a "$out"
  if [ "$quick" = 1 ]; then
    bench '^Benchmark(Serve\w*8|HTTP\w*8)$' "${BENCHTIME:-4000x}"
  else
    bench '^Benchmark(Call\w*|Serve\w*8|Spread\w*|HTTP\w*8|WS\w*)$' "${BENCHTIME:-4000x}"
  fi
  bench '^Benchmark(Serve|HTTP)\w*1$' "${SEQ_BENCHTIME:-2000x}"
  if [ "${BENCH_PEERS:-1}" != 0 ]; then
    bench '^BenchmarkPeers(Stdio|HTTP)8$' "${PEERS_BENCHTIME:-2000x}"
    bench '^BenchmarkPeers(Stdio|HTTP)1$' "${PEERS_SEQ_BENCHTIME:-500x}"
  fi
  # Starting a plugin takes tens of milliseconds: fewer rounds.
  [ "$quick" = 1 ] || bench 'Plugin(Start|Floor)' 20x
done
# Allocations per relayed call, in process (host/gateway, -benchmem).
go test -run='^$' -bench='^BenchmarkRelayStdio(Raw)?$' -benchmem -benchtime=2000x -count="$rounds" ./host/gateway | tee -a "$out"
if [ "$quick" != 1 ]; then
  # Decoding one JSON-RPC message: the go-sdk's decoder vs internal/jsonrpcmsg.
  go test -run='^$' -bench=Decode -benchmem -count="$rounds" ./internal/jsonrpcmsg | tee -a "$out"
  # Permission decisions: 10,000 rules against 10,000 tool names.
  go test -run='^$' -bench=Decide -benchtime=1000000x -count="$rounds" ./host/permissions | tee -a "$out"
  # Tool search (serve --tool-search) on the 1,000-tool catalogue of
  # internal/testing/toolcatalog: tokens of the full list vs the search path, recall,
  # and the index's build and query times (library and through the gateway).
  go test -run='^$' -bench=ToolSearch -benchtime=1000x -count="$rounds" ./host/gateway | tee -a "$out"
  go test -run='^$' -bench=Index -benchmem -count="$rounds" ./host/toolsearch | tee -a "$out"
  # Inbound OAuth (gateway { oauth }): token validation per request against
  # the static token, interleaved in one loop; Verify hit and miss.
  go test -run='^$' -bench='HTTPAuth/stdio/.*/interleaved|HandlerAuth|Verify' -benchtime=3000x -count="$rounds" ./host/gateway | tee -a "$out"
  # Scale-out (test/scaleout, BenchmarkReplicas): replicas of serve --http
  # sharing a real redis-server, behind a real HAProxy, vs one replica
  # directly, and what Redis adds to the requests that need it. Each round
  # starts its clusters (seconds) and builds the binaries: fewer rounds, each
  # a round of every case (SCALEOUT_COUNT, SCALEOUT_BENCHTIME). Needs
  # redis-server and haproxy (make test-deps).
  go test -c -o "$out.scaleout" ./test/scaleout
  for i in $(seq "${SCALEOUT_COUNT:-3}"); do
    (cd test/scaleout && "$out.scaleout" -test.run='^$' -test.bench='^BenchmarkReplicas$' -test.benchtime="${SCALEOUT_BENCHTIME:-2000x}") | tee -a "$out"
  done
  # One Redis round trip after both ends idled, over a plain socket and
  # through the backend: the floor of what Redis adds to a request here.
  go test -run='^$' -bench='^BenchmarkRedisRoundTripAfterIdle$' -benchtime=300x -count="${SCALEOUT_COUNT:-3}" ./host/state/redisstate | tee -a "$out"
fi
mkdir -p bin
cp "$out" bin/bench-raw.txt
{ go run ./internal/testing/benchreport < "$out"; echo; cat test/bench/NOTES.md; } > "$report"
echo "wrote $report (raw output: bin/bench-raw.txt)"
