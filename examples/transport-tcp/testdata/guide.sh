mkdir transport-tcp
cd transport-tcp
go mod init example.com/transport-tcp

go get github.com/mcphost/mcphost/sdk@latest
mkdir -p ~/.config/mcphost/plugins
chmod 0755 ~/.config/mcphost/plugins
go build -o ~/.config/mcphost/plugins/transport-tcp .
mcphost plugins lock

mcphost-demo -tcp 127.0.0.1:9000 &
mcphost server add --scope user demo tcp://127.0.0.1:9000
cat >> ~/.config/mcphost/config.hcl <<'END'
permissions {
  allow = ["mcp__demo"]
}
END
mcphost servers
mcphost call mcp__demo__echo '{"message":"hello over tcp"}'
