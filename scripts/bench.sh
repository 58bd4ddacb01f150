#!/usr/bin/env bash
# Runs the benchmarks and writes BENCHMARKS.md (ratios against the direct path,
# measured in the same run). BENCHTIME and COUNT tune the run.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp)
trap 'rm -f "$out"' EXIT
go test -run='^$' -bench=. -benchtime="${BENCHTIME:-3000x}" -count="${COUNT:-5}" ./test/bench | tee "$out"
go run ./internal/benchreport < "$out" > BENCHMARKS.md
echo "wrote BENCHMARKS.md"
