settings {
  ready_when    = "all"
  drain_timeout = "5s"
}

telemetry {
  service_name  = "mcphost"
  otlp_endpoint = "http://127.0.0.1:4318"
  otlp_protocol = "http/protobuf"
  otlp_headers  = { authorization = env("X", "none") }
  traces        = true
  metrics       = true
  prometheus    = true
  sample_ratio  = 0.5
}

server "tools" {
  command = "x"
  tools {
    include = ["a*"]
    exclude = ["ab"]
  }
}
