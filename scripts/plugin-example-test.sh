#!/usr/bin/env bash
# The example plugin (examples/transport-tcp, a module of its own, as a
# plugin outside the repository is): checks that its go.mod is tidy and vets
# it in place, then copies it to a fresh directory outside the repository,
# points its replace at this checkout and runs its tests there (they follow
# docs/writing-a-plugin.md from an empty directory to a call through the
# host).
set -euo pipefail
GO="${GO:-go}"
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root/examples/transport-tcp"
"$GO" mod tidy -diff
"$GO" vet ./...
copy="$(mktemp -d)"
trap 'chmod -R u+w "$copy" 2>/dev/null; rm -rf "$copy"' EXIT
cp -R . "$copy/transport-tcp"
cd "$copy/transport-tcp"
"$GO" mod edit -replace "github.com/mcphost/mcphost=$root"
"$GO" test -count=1 ./...
