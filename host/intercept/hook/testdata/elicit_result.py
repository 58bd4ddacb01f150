#!/usr/bin/env python3
"""ElicitationResult: refuse to send a production answer back."""
import json
import sys

data = json.load(sys.stdin)
if data.get("action") == "accept" and data.get("content", {}).get("env") == "prod":
    print(json.dumps({
        "hookSpecificOutput": {
            "hookEventName": "ElicitationResult",
            "action": "decline",
            "content": {},
        }
    }))
