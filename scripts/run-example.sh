#!/usr/bin/env bash
# Serves config.hcl.example: starts the bundled demo server on streamable HTTP
# (the example's "demo-http" server), then `mcphost serve --http ADDR`, and
# once it listens prints the `mcphost client connect` commands that connect
# a client to it. Loopback only; no account anywhere.
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

# The gateway's bearer token: the one in $MCPHOST_SERVE_TOKEN (never
# printed), else a random one made here, so that the commands below can
# name the variable a client reads it from.
generated=
if [ -z "${MCPHOST_SERVE_TOKEN:-}" ]; then
  MCPHOST_SERVE_TOKEN=$(od -An -N32 -tx1 /dev/urandom | tr -d ' \n')
  generated=1
fi
export MCPHOST_SERVE_TOKEN

# The mcphost the commands run: the one on the PATH (make install), else this build.
mcphost=mcphost
command -v mcphost >/dev/null 2>&1 || mcphost="$PWD/bin/mcphost"
url="http://${addr}/mcp"

connect_commands() {
  cat <<MSG

Connect a client to this gateway (in another terminal; the client reads the
token from \$MCPHOST_SERVE_TOKEN, so export it where the client starts):
MSG
  if [ -n "$generated" ]; then
    printf '  export MCPHOST_SERVE_TOKEN=%s\n' "$MCPHOST_SERVE_TOKEN"
  else
    printf '  (MCPHOST_SERVE_TOKEN is already set in this shell: use the same value there)\n'
  fi
  for client in claude-code cursor vscode gemini codex; do
    printf '  %s client connect %s --http %s --token-env MCPHOST_SERVE_TOKEN\n' "$mcphost" "$client" "$url"
  done
  printf '  %s --config %s client connect claude-desktop   # stdio: Claude Desktop starts mcphost serve itself\n' "$mcphost" "$PWD/config.hcl.example"
  printf 'Undo with: %s client disconnect CLIENT\n\n' "$mcphost"
}

# Job control: the gateway runs in a process group of its own that has the
# terminal, so Ctrl-C reaches it alone (make and this script do not die of
# it); the gateway drains, stops its servers and exits 0, and so does make.
# Its output passes through a reader (which ignores Ctrl-C, and ends when
# the gateway does) that adds the connect commands after the serve banner.
set -m
./bin/mcphost --config config.hcl.example serve --http "$addr" | {
  trap '' INT
  shown=
  while IFS= read -r line; do
    printf '%s\n' "$line"
    case $line in
      *"Authorization: Bearer"*)
        if [ -z "$shown" ]; then
          connect_commands
          shown=1
        fi
        ;;
    esac
  done
}
