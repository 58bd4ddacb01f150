#!/usr/bin/env python3
"""PreToolUse: approve reads and rewrite the input (updatedInput replaces
the whole input, so the unchanged fields are kept)."""
import json
import sys

data = json.load(sys.stdin)
tool_input = dict(data.get("tool_input", {}))
tool_input["limit"] = min(int(tool_input.get("limit", 100)), 10)
print(json.dumps({
    "hookSpecificOutput": {
        "hookEventName": "PreToolUse",
        "permissionDecision": "allow",
        "permissionDecisionReason": "Read-only query, auto-approved",
        "updatedInput": tool_input,
        "additionalContext": "Results are capped at 10 rows.",
    }
}))
