# Every attribute of hook and interceptor blocks (a seed of FuzzDecodeHooks).
hook "PreToolUse" {
  matcher     = "mcp__github__.*"
  command     = "python3 /opt/hooks/check.py"
  shell       = "sh"
  env         = { POLICY = "strict" }
  inherit_env = ["AWS_PROFILE"]
  timeout     = "30s"
  fail_open   = false
  mode        = "enforce"
  match {
    servers = ["github"]
    tools   = ["mcp__github__*"]
    principals {
      groups   = ["eng"]
      subjects = ["alice"]
    }
  }
}
hook "PostToolUse" {
  url              = "https://hooks.example.com/post"
  headers          = { Authorization = "Bearer $HOOK_TOKEN" }
  allowed_env_vars = ["HOOK_TOKEN"]
}
hook "Elicitation" {
  matcher = "github|docs"
  command = "./answer.sh"
}
interceptor "guard" {
  plugin    = "guard-regex"
  options   = { deny_arguments = ["(?i)drop\\s+table"], redact_results = ["AKIA[0-9A-Z]{16}"] }
  events    = ["tools/call", "prompts/get", "tools/list"]
  phases    = ["request", "response"]
  mode      = "audit"
  fail_open = true
  timeout   = "5s"
  match { servers = ["github"] }
}
interceptor "pii" {
  server   = "a"
  names    = ["pii-redactor"]
  protocol = "sep-2624/2026-09"
}
interceptor "args" { builtin = "validate_input" }
interceptor "out" { builtin = "validate_output" }
interceptor "keys" {
  builtin = "secrets"
  action  = "redact"
}
settings {
  managed_hooks_only = true
}
