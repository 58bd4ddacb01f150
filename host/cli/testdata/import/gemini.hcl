server "stream" {
  transport = "http"
  url       = "http://127.0.0.1:9/mcp"
  headers = {
    X-API-Key = secret("stream.HASH.headers.X-API-Key")
  }
}

server "events" {
  transport = "sse"
  url       = "http://127.0.0.1:9/events"
}

server "local" {
  command = "python"
  args    = ["-m", "srv"]
  env = {
    DB = env("DB_URL")
  }
  cwd = "$WORK/proj/tools"
}
