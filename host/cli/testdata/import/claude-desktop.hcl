server "filesystem" {
  command = "npx"
  args    = ["-y", "@modelcontextprotocol/server-filesystem", "$${HOME}/Documents"]
}

server "github" {
  command = "docker"
  args    = ["run", "-i", "--rm", "-e", "GITHUB_PERSONAL_ACCESS_TOKEN", "ghcr.io/github/github-mcp-server"]
  env = {
    GITHUB_PERSONAL_ACCESS_TOKEN = secret("github.HASH.env.GITHUB_PERSONAL_ACCESS_TOKEN")
  }
}

server "old" {
  command  = "old-mcp"
  disabled = true
}
