#!/bin/sh
# Records the hook's environment and directory in $OUT.
cat >/dev/null
env > "$OUT"
pwd > "$OUT.cwd"
