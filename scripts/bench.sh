#!/usr/bin/env bash
# Runs the benchmarks and writes BENCHMARKS.md (ratios against the direct path,
# measured in the same run). The runs are interleaved (COUNT rounds of every
# benchmark) so that a slow spell of the shared machine hits both sides of a
# ratio alike. BENCHTIME and COUNT tune the run.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp)
trap 'rm -f "$out"' EXIT
go test -c -o "$out.test" ./test/bench
trap 'rm -f "$out" "$out.test"' EXIT
for i in $(seq "${COUNT:-7}"); do
  (cd test/bench && "$out.test" -test.run='^$' -test.bench='Call|Serve|Spread|HTTP|WS' -test.benchtime="${BENCHTIME:-3000x}") | tee -a "$out"
  # Starting a plugin takes tens of milliseconds: fewer rounds.
  (cd test/bench && "$out.test" -test.run='^$' -test.bench='Plugin(Start|Floor)' -test.benchtime=20x) | tee -a "$out"
done
# Decoding one JSON-RPC message: the go-sdk's decoder vs internal/jsonrpcmsg.
go test -run='^$' -bench=Decode -benchmem -count="${COUNT:-7}" ./internal/jsonrpcmsg | tee -a "$out"
# Permission decisions: 10,000 rules against 10,000 tool names.
go test -run='^$' -bench=Decide -benchtime=1000000x -count="${COUNT:-7}" ./host/permissions | tee -a "$out"
# Tool search (serve --tool-search) on the 1,000-tool catalogue of
# internal/toolcatalog: tokens of the full list vs the search path, recall,
# and the index's build and query times (library and through the gateway).
go test -run='^$' -bench=ToolSearch -benchtime=1000x -count="${COUNT:-7}" ./host/serve | tee -a "$out"
go test -run='^$' -bench=Index -benchmem -count="${COUNT:-7}" ./host/toolsearch | tee -a "$out"
# Inbound OAuth (gateway { oauth }): token validation per request against
# the static token, interleaved in one loop; Verify hit and miss.
go test -run='^$' -bench='HTTPAuth/stdio/.*/interleaved|HandlerAuth|Verify' -benchtime=3000x -count="${COUNT:-7}" ./host/serve | tee -a "$out"
# Scale-out (test/scaleout, BenchmarkReplicas): replicas of serve --http
# sharing a real redis-server, behind a real HAProxy, vs one replica
# directly, and what Redis adds to the requests that need it. Each round
# starts its clusters (seconds) and builds the binaries: fewer rounds, each
# a round of every case (SCALEOUT_COUNT, SCALEOUT_BENCHTIME). Needs
# redis-server and haproxy (make test-deps).
go test -c -o "$out.scaleout" ./test/scaleout
trap 'rm -f "$out" "$out.test" "$out.scaleout"' EXIT
for i in $(seq "${SCALEOUT_COUNT:-3}"); do
  (cd test/scaleout && "$out.scaleout" -test.run='^$' -test.bench='^BenchmarkReplicas$' -test.benchtime="${SCALEOUT_BENCHTIME:-2000x}") | tee -a "$out"
done
# One Redis round trip after both ends idled, over a plain socket and
# through the backend: the floor of what Redis adds to a request here.
go test -run='^$' -bench='^BenchmarkRedisRoundTripAfterIdle$' -benchtime=300x -count="${SCALEOUT_COUNT:-3}" ./host/state/redisstate | tee -a "$out"
{ go run ./internal/benchreport < "$out"; echo; cat test/bench/NOTES.md; } > BENCHMARKS.md
echo "wrote BENCHMARKS.md"
