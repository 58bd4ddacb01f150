#!/usr/bin/env python3
"""PreToolUse: deny database writes with a JSON decision and a reason."""
import json
import sys

data = json.load(sys.stdin)
query = data.get("tool_input", {}).get("query", "")
if query.lstrip().upper().startswith(("INSERT", "UPDATE", "DELETE", "DROP")):
    print(json.dumps({
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": "Database writes are not allowed",
        }
    }))
sys.exit(0)
