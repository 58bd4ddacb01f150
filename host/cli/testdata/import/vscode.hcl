server "github" {
  transport = "http"
  url       = "https://api.githubcopilot.com/mcp/"
  headers = {
    Authorization = "Bearer ${env("GITHUB_TOKEN")}"
  }
}
