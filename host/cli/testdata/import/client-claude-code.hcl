server "db" {
  command = "${env("HOME")}/bin/db-mcp"
}

server "everything" {
  command = "npx"
  args    = ["-y", "@modelcontextprotocol/server-everything"]
}
