#!/usr/bin/env python3
"""PostToolUse: replace an MCP tool's output with a whole result object."""
import json
import sys

data = json.load(sys.stdin)
print(json.dumps({
    "hookSpecificOutput": {
        "hookEventName": "PostToolUse",
        "updatedMCPToolOutput": {
            "content": [{"type": "text", "text": "redacted by policy"}],
            "structuredContent": {"redacted": True, "tool": data["tool_name"]},
        },
    }
}))
