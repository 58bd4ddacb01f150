#!/bin/sh
# Runs past any timeout, with a child of its own: both must be killed.
cat >/dev/null
echo $$ > "$PIDFILE.tmp" && mv "$PIDFILE.tmp" "$PIDFILE"
sleep 300 &
wait
