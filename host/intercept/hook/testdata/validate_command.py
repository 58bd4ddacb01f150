#!/usr/bin/env python3
"""PreToolUse: a command validator in the style of Claude Code's reference
implementation: issues on stderr and exit 2 block the call."""
import json
import re
import sys

RULES = [
    (r"\bgrep\b(?!.*\|)", "Use 'rg' (ripgrep) instead of 'grep' for better performance"),
    (r"\bfind\s+\S+\s+-name\b", "Use 'rg --files -g pattern' instead of 'find -name'"),
]

try:
    data = json.load(sys.stdin)
except json.JSONDecodeError as e:
    print(f"Error: Invalid JSON input: {e}", file=sys.stderr)
    sys.exit(1)

command = data.get("tool_input", {}).get("command", "")
issues = [msg for pattern, msg in RULES if re.search(pattern, command)]
if issues:
    for msg in issues:
        print(f"• {msg}", file=sys.stderr)
    sys.exit(2)
sys.exit(0)
