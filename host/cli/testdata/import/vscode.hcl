server "fetch" {
  command = "uvx"
  args    = ["mcp-server-fetch"]
  env = {
    HOME_DIR = env("HOME")
    LOG      = env("LOG_LEVEL")
  }
  env_file = "$WORK/proj/.env"
}

server "github" {
  transport = "http"
  url       = "https://api.githubcopilot.com/mcp/"
  headers = {
    Authorization = "Bearer ${env("GITHUB_TOKEN")}"
  }
}
