#!/bin/sh
# PreToolUse: block rm commands with exit 2 (stderr is the reason), the way
# Claude Code's hooks reference blocks them. No jq: the input is matched as
# the compact JSON it is.
input=$(cat)
case "$input" in
*'"command":"rm'*)
	echo "Blocked: rm commands are not allowed" >&2
	exit 2
	;;
esac
exit 0
