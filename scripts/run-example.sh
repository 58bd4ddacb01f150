#!/usr/bin/env bash
# Serves config.hcl.example: starts the bundled demo server on streamable HTTP
# (the example's "demo-http" server), then `mcphost serve --http ADDR`.
set -euo pipefail
cd "$(dirname "$0")/.."
addr=${1:-127.0.0.1:8931}
port=${DEMO_HTTP_PORT:-18931}
./bin/mcphost-demo -http "127.0.0.1:${port}" -name demo-http 2>/dev/null &
demo=$!
trap 'kill $demo 2>/dev/null; wait $demo 2>/dev/null || true' EXIT
for _ in $(seq 50); do
  (exec 3<>"/dev/tcp/127.0.0.1/${port}") 2>/dev/null && break
  sleep 0.1
done
./bin/mcphost --config config.hcl.example serve --http "$addr"
