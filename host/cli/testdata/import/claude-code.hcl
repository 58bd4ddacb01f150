server "everything" {
  command = "npx"
  args    = ["-y", "@modelcontextprotocol/server-everything"]
}
