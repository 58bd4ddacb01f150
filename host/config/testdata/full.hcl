settings {
  connect_timeout            = "30s"
  tool_timeout               = "5m"
  connect_concurrency_local  = 3
  connect_concurrency_remote = 20
  approve_all_project_servers = false
  approved_project_servers = {
    p = "sha256:0000000000000000000000000000000000000000000000000000000000000000"
  }
}

server "everything" {
  command     = "npx"
  args        = ["-y", "@modelcontextprotocol/server-everything"]
  env         = { API_KEY = env("API_KEY", "none") }
  inherit_env = ["NODE_OPTIONS"]
  cwd         = "/tmp"
}

server "remote" {
  transport       = "http"
  url             = "https://api.example.com/mcp"
  headers         = { Authorization = "Bearer ${env("TOKEN", "t")}" }
  connect_timeout = "10s"
}

server "legacy" {
  transport = "sse"
  url       = "http://127.0.0.1:9000/sse"
  disabled  = true
}
