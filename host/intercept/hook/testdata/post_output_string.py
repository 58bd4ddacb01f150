#!/usr/bin/env python3
"""PostToolUse: replace an MCP tool's output with a string."""
import json
import sys

data = json.load(sys.stdin)
texts = [c.get("text", "") for c in data["tool_response"].get("content", []) if c.get("type") == "text"]
print(json.dumps({
    "hookSpecificOutput": {
        "hookEventName": "PostToolUse",
        "updatedMCPToolOutput": " ".join(texts).upper(),
    }
}))
