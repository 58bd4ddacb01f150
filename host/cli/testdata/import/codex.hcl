server "docs" {
  command = "npx"
  args    = ["-y", "mcp-docs"]
  env = {
    DOCS_MODE = "fast"
  }
  inherit_env = ["AWS_PROFILE"]
}

server "linear" {
  transport = "http"
  url       = "https://mcp.linear.app/mcp"
  headers = {
    Authorization = "Bearer ${env("LINEAR_TOKEN")}"
    X-Team        = "core"
  }
}

server "off" {
  command  = "off-mcp"
  disabled = true
}
