#!/usr/bin/env python3
"""PostToolUse: block a result that leaks a private key."""
import json
import sys

data = json.load(sys.stdin)
response = json.dumps(data.get("tool_response", {}))
if "PRIVATE KEY" in response:
    print(json.dumps({
        "decision": "block",
        "reason": "The result contains a private key",
        "hookSpecificOutput": {
            "hookEventName": "PostToolUse",
            "additionalContext": "Ask the user for a redacted export instead.",
        },
    }))
