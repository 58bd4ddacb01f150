#!/usr/bin/env python3
"""PostToolUse, as written for Claude Code: block or replace an MCP tool's output."""
import json
import sys

data = json.load(sys.stdin)
texts = [c.get("text", "") for c in data["tool_response"].get("content", []) if c.get("type") == "text"]
text = " ".join(texts)
if "block me" in text:
    print(json.dumps({"decision": "block", "reason": "the output was blocked by a hook"}))
elif "shout" in text:
    print(json.dumps({"hookSpecificOutput": {"hookEventName": "PostToolUse", "updatedMCPToolOutput": text.upper()}}))
sys.exit(0)
