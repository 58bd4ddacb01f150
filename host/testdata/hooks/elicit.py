#!/usr/bin/env python3
"""Elicitation, as written for Claude Code: answer the server's form without asking."""
import json
import sys

data = json.load(sys.stdin)
if data.get("mode", "form") == "form" and "answer" in data.get("requested_schema", {}).get("properties", {}):
    print(json.dumps({
        "hookSpecificOutput": {
            "hookEventName": "Elicitation",
            "action": "accept",
            "content": {"answer": "from the hook (" + data.get("mcp_server_name", "") + ")"},
        }
    }))
sys.exit(0)
