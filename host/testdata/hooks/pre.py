#!/usr/bin/env python3
"""PreToolUse, as written for Claude Code: decide by the message argument."""
import json
import os
import sys

data = json.load(sys.stdin)
if os.environ.get("HOOK_LOG"):
    with open(os.environ["HOOK_LOG"], "a") as f:
        f.write(data["hook_event_name"] + " " + data["tool_name"] + "\n")
message = data.get("tool_input", {}).get("message", "")


def decide(decision, reason="", updated=None):
    out = {"hookEventName": "PreToolUse", "permissionDecision": decision, "permissionDecisionReason": reason}
    if updated is not None:
        out["updatedInput"] = updated
    print(json.dumps({"hookSpecificOutput": out}))
    sys.exit(0)


if "forbidden" in message:
    decide("deny", "forbidden words are not allowed")
if "ask me" in message:
    decide("ask", "a person should look at this")
if "rewrite" in message:
    decide("allow", "rewritten", {"message": "rewritten by the hook"})
if "allow" in message:
    decide("allow", "fine")
if "rm -rf" in message:
    print("Blocked: rm -rf", file=sys.stderr)
    sys.exit(2)
sys.exit(0)
