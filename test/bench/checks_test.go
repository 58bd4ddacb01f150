package bench

// Issue 36's costs of hooks and interceptors on the gateway hop, one
// caller (sequential calls), against BenchmarkServeGateway1 and
// BenchmarkHTTPGateway1 in the same round (scripts/bench.sh runs every
// ^Benchmark(Serve|HTTP)\w*1$). The demo echo tool's inferred inputSchema
// (message: string, required) makes validate_input do real work.

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// noneChecks are a hook and interceptors of every kind the relay runs in
// process or out, each matching only mcp__other__ tools: the demo's calls
// are matched by nothing.
const noneChecks = `
hook "PreToolUse" {
  matcher = "mcp__other__.*"
  command = "exit 0"
}
hook "PostToolUse" {
  matcher = "mcp__other__.*"
  command = "exit 0"
}
interceptor "args" {
  builtin = "validate_input"
  match { tools = ["mcp__other__*"] }
}
interceptor "out" {
  builtin = "validate_output"
  match { tools = ["mcp__other__*"] }
}
interceptor "keys" {
  builtin = "secrets"
  match { tools = ["mcp__other__*"] }
}
`

// BenchmarkServeGatewayCheckNone1 is BenchmarkServeGateway1 with checks
// configured that match none of its calls: the relay's fast path is kept
// (goal: p50 within ×1.03).
func BenchmarkServeGatewayCheckNone1(b *testing.B) {
	serveGateway(b, newVersion, checksConfig(b, noneChecks), 1)
}

const validateCheck = `
interceptor "args" {
  builtin = "validate_input"
}
`

// BenchmarkServeGatewayValidate1 is BenchmarkServeGateway1 with every call
// checked by validate_input (goal: ≤ +20 µs p50).
func BenchmarkServeGatewayValidate1(b *testing.B) {
	serveGateway(b, newVersion, checksConfig(b, validateCheck), 1)
}

// BenchmarkHTTPGatewayValidate1 is BenchmarkHTTPGateway1 with every call
// checked by validate_input (goal: ≤ +20 µs p50).
func BenchmarkHTTPGatewayValidate1(b *testing.B) {
	httpGateway(b, checksConfig(b, validateCheck), 1)
}

// BenchmarkServeGatewayGuard1 is BenchmarkServeGateway1 with the
// guard-regex plugin on both phases of every call, matching nothing in
// them (goal: ≤ +200 µs p50).
func BenchmarkServeGatewayGuard1(b *testing.B) {
	dir := b.TempDir()
	cfg := checksConfig(b, fmt.Sprintf(`
settings {
  plugin_dir  = %q
  plugin_lock = %q
}
interceptor "guard" {
  plugin  = "guard-regex"
  options = {
    deny_arguments = ["(?i)drop\\s+table", "rm\\s+-rf"]
    redact_results = ["AKIA[0-9A-Z]{16}"]
  }
}
`, filepath.Join(binDir, "plugins"), filepath.Join(dir, "lock.hcl")), func(cfg string) {
		if out, err := exec.Command(mcphostPath(), "--config", cfg, "plugins", "lock").CombinedOutput(); err != nil {
			b.Fatalf("plugins lock: %v\n%s", err, out)
		}
	})
	serveGateway(b, newVersion, cfg, 1)
}

// BenchmarkServeGatewayHookSh1 is BenchmarkServeGateway1 with a command
// hook (`exit 0`, run by sh) before every call: the cost of a hook
// process per call (measured; no goal).
func BenchmarkServeGatewayHookSh1(b *testing.B) {
	serveGateway(b, newVersion, checksConfig(b, `
hook "PreToolUse" {
  command = "exit 0"
}
`), 1)
}

// checkScript is a Claude Code PreToolUse hook in the docs' style: it
// reads the input from stdin and blocks (exit 2, the reason on stderr) a
// call whose arguments hold a destructive command; the benchmark's calls
// pass.
const checkScript = `import json, re, sys

RULES = [(r"\brm\s+-rf\b", "rm -rf is not allowed"), (r"(?i)\bdrop\s+table\b", "DROP TABLE is not allowed")]

data = json.load(sys.stdin)
if data.get("hook_event_name") != "PreToolUse":
    sys.exit(0)
text = json.dumps(data.get("tool_input", {}))
issues = [msg for pattern, msg in RULES if re.search(pattern, text)]
if issues:
    print("; ".join(issues), file=sys.stderr)
    sys.exit(2)
sys.exit(0)
`

// BenchmarkServeGatewayHookPy1 is BenchmarkServeGateway1 with the python3
// deny-check hook before every call (allowing them all): the cost of a
// typical Claude Code hook script (measured; no goal).
func BenchmarkServeGatewayHookPy1(b *testing.B) {
	python, err := exec.LookPath("python3")
	if err != nil {
		b.Skip("python3 is not installed")
	}
	script := filepath.Join(b.TempDir(), "check.py")
	if err := os.WriteFile(script, []byte(checkScript), 0o644); err != nil {
		b.Fatal(err)
	}
	serveGateway(b, newVersion, checksConfig(b, fmt.Sprintf(`
hook "PreToolUse" {
  command = %q
}
`, python+" "+script)), 1)
}

// BenchmarkServeGatewaySecrets1 is BenchmarkServeGateway1 with the secrets
// built-in on both phases of every call (measured; expected ≤ +20 µs).
func BenchmarkServeGatewaySecrets1(b *testing.B) {
	serveGateway(b, newVersion, checksConfig(b, `
interceptor "keys" {
  builtin = "secrets"
}
`), 1)
}

// checksConfig is gatewayConfig(b, 1, extra), checked by `mcphost config
// validate` first: a build of mcphost that does not know hook and
// interceptor blocks yet skips the benchmark (saying so) rather than
// measuring a gateway without its checks.
func checksConfig(b *testing.B, extra string, prepare ...func(cfg string)) string {
	b.Helper()
	cfg := gatewayConfig(b, 1, extra)
	for _, f := range prepare {
		f(cfg)
	}
	if out, err := exec.Command(mcphostPath(), "--config", cfg, "config", "validate").CombinedOutput(); err != nil {
		b.Fatalf("config validate: %v\n%s", err, out)
	}
	return cfg
}
