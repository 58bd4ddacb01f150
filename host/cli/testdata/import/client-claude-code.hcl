server "db" {
  command = "${env("HOME")}/bin/db-mcp"
}

server "shared" {
  command = "from-project"
}

server "My-Server" {
  transport = "http"
  url       = "http://127.0.0.1:9/mcp"
}

server "everything" {
  command = "npx"
  args    = ["-y", "@modelcontextprotocol/server-everything"]
}
