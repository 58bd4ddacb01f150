package clientconf

import "fmt"

// Connection is how a client's file connects the gateway.
type Connection struct {
	// Name is the entry's name; Line its line in the file.
	Name string
	Line int
	// Transport is "stdio" or "http".
	Transport string
	// Command and Configs (stdio): the command and the --config files it
	// serves.
	Command string
	Configs []string
	// URL (http) is the endpoint.
	URL string
}

// Status returns client c's file of scope and the gateway's entry name in
// it (nil when it is not there, or the file does not exist).
func Status(c Client, scope Scope, env Env, name string) (string, *Connection, error) {
	if name == "" {
		name = DefaultName
	}
	p, err := c.Path(scope, env)
	if err != nil {
		return "", nil, err
	}
	data, existed, err := readFile(p)
	if err != nil || !existed {
		return p, nil, err
	}
	var fields map[string]any
	var line int
	if c.ID == "codex" {
		fields, line, err = tomlGet(data, name)
	} else {
		fields, line, err = jsonGet(data, serversKey(c), name)
	}
	if err != nil {
		return p, nil, fmt.Errorf("%s: %w", p, err)
	}
	if fields == nil {
		return p, nil, nil
	}
	conn := &Connection{Name: name, Line: line}
	if cmd, _ := fields["command"].(string); cmd != "" {
		conn.Transport, conn.Command = "stdio", cmd
		args, _ := fields["args"].([]any)
		for i := 0; i < len(args); i++ {
			if s, _ := args[i].(string); s == "--config" && i+1 < len(args) {
				if v, ok := args[i+1].(string); ok {
					conn.Configs = append(conn.Configs, v)
				}
				i++
			}
		}
		return p, conn, nil
	}
	for _, k := range []string{"httpUrl", "url", "serverUrl"} {
		if u, _ := fields[k].(string); u != "" {
			conn.Transport, conn.URL = "http", u
			if t, _ := fields["type"].(string); t == "sse" || c.ID == "gemini" && k == "url" {
				conn.Transport = "sse"
			}
			break
		}
	}
	return p, conn, nil
}
