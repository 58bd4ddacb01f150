#!/usr/bin/env bash
# Serves config.hcl.example: starts the bundled demo server on streamable HTTP
# (the example's "demo-http" server), then `mcphost serve --http ADDR`.
set -euo pipefail
cd "$(dirname "$0")/.."
addr=${1:-127.0.0.1:8931}
port=${DEMO_HTTP_PORT:-18931}
wsport=${DEMO_WS_PORT:-18932}
./bin/mcphost-demo -http "127.0.0.1:${port}" -name demo-http 2>/dev/null &
demo=$!
./bin/mcphost-demo -ws "127.0.0.1:${wsport}" -name demo-ws 2>/dev/null &
demows=$!
trap 'kill $demo $demows 2>/dev/null; wait $demo $demows 2>/dev/null || true' EXIT
for p in "$port" "$wsport"; do
  for _ in $(seq 50); do
    (exec 3<>"/dev/tcp/127.0.0.1/${p}") 2>/dev/null && break
    sleep 0.1
  done
done
# The plugins were just built: record their checksums before anything starts them.
./bin/mcphost --config config.hcl.example plugins lock
# Job control: the gateway runs in a process group of its own that has the
# terminal, so Ctrl-C reaches it alone (make and this script do not die of
# it); the gateway drains, stops its servers and exits 0, and so does make.
set -m
./bin/mcphost --config config.hcl.example serve --http "$addr"
