#!/usr/bin/env python3
"""PostToolUseFailure: tell the model what to do about the error."""
import json
import sys

data = json.load(sys.stdin)
print(json.dumps({
    "hookSpecificOutput": {
        "hookEventName": "PostToolUseFailure",
        "additionalContext": "The tool failed with: " + data["error"] + " (interrupt: " + str(data.get("is_interrupt")) + ")",
    }
}))
