#!/bin/sh
# A demo headers helper for config.hcl.example: prints a JSON object of
# headers for the server named in MCP_SERVER_NAME. A real one would fetch a
# short-lived token (from a vault, a CLI login, …).
printf '{"Authorization": "Bearer demo-token-for-%s", "X-Demo-Helper": "1"}\n' "$MCP_SERVER_NAME"
