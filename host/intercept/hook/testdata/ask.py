#!/usr/bin/env python3
"""PreToolUse: make the user confirm anything touching production."""
import json
import sys

data = json.load(sys.stdin)
if "prod" in json.dumps(data.get("tool_input", {})):
    print(json.dumps({
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "ask",
            "permissionDecisionReason": "This touches production",
        }
    }))
