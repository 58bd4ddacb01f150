#!/usr/bin/env python3
"""Elicitation: answer the server's credentials form without asking."""
import json
import sys

data = json.load(sys.stdin)
if data.get("mode") == "form" and "username" in data.get("requested_schema", {}).get("properties", {}):
    print(json.dumps({
        "hookSpecificOutput": {
            "hookEventName": "Elicitation",
            "action": "accept",
            "content": {"username": "alice"},
        }
    }))
