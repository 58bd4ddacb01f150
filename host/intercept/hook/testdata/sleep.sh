#!/bin/sh
# Runs past any timeout, with a child of its own: both must be killed.
cat >/dev/null
sleep 300 &
echo $! > "$PIDFILE.child"
echo $$ > "$PIDFILE.tmp" && mv "$PIDFILE.tmp" "$PIDFILE"
wait
