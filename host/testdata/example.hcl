# The configuration of the host package's examples: the built-in "calc"
# server (added in Go as config.InProcessServer) may be called without asking.
permissions {
  allow = ["mcp__calc"]
}
