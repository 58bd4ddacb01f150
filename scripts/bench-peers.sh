#!/usr/bin/env bash
# Installs the gateways that `make bench` compares mcphost with, at pinned
# versions, into test/bench/peers (gitignored: node_modules/ and bin/), from
# the npm registry and the Go module proxy. Run by scripts/bench.sh; a peer
# that fails to install is left out of the run (its benchmarks skip) with a
# warning. Pinned: npm packages in test/bench/peers/package.json and its
# lock file; ToolHive below.
#
#   mcp-proxy (npm, punkpeye's TypeScript proxy)  stdio upstream
#   supergateway (npm)                            stdio upstream
#   ToolHive's thv (`thv proxy`) and vmcp (Go)    HTTP upstream
#
# thv refuses to run any command without a container runtime (it pings the
# Docker API first): the benchmark answers that ping on a socket of its own
# (TOOLHIVE_DOCKER_SOCKET); `thv proxy` then starts no container. vmcp runs
# with a static backend (no ToolHive group, no containers, no Kubernetes).
# Not installed: TBXark/mcp-proxy (Go), which the Go module proxy reachable
# here does not serve (403 for github.com/TBXark/mcp-proxy). Not run:
# `thv run` and vmcp's group discovery, which need a container runtime.
set -uo pipefail
cd "$(dirname "$0")/../test/bench/peers"
TOOLHIVE_VERSION=v0.47.0
status=0
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund --loglevel=error || { echo "bench-peers: npm peers not installed" >&2; status=1; }
fi
mkdir -p bin
if [ "$(cat bin/.toolhive-version 2>/dev/null)" != "$TOOLHIVE_VERSION" ] || [ ! -x bin/thv ] || [ ! -x bin/vmcp ]; then
  rm -f bin/.toolhive-version
  if GOBIN="$PWD/bin" GOFLAGS= go install "github.com/stacklok/toolhive/cmd/thv@$TOOLHIVE_VERSION" "github.com/stacklok/toolhive/cmd/vmcp@$TOOLHIVE_VERSION"; then
    echo "$TOOLHIVE_VERSION" > bin/.toolhive-version
  else
    echo "bench-peers: ToolHive $TOOLHIVE_VERSION not installed" >&2
    status=1
  fi
fi
exit $status
