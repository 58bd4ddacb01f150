package clientconf

import (
	"encoding/json"
	"fmt"

	"github.com/tailscale/hujson"
)

// ProjectChoices are what the user decided in Claude Code about the
// servers of a project's .mcp.json: Claude Code asks before it runs one,
// and keeps the answer in ~/.claude.json under projects[dir].
type ProjectChoices struct {
	// Enabled are the servers the user approved (enabledMcpjsonServers);
	// Disabled those the user refused (disabledMcpjsonServers).
	Enabled, Disabled []string
	// EnableAll is enableAllProjectMcpServers: every server of the file is
	// approved.
	EnableAll bool
}

// Refused reports whether the user refused server name in Claude Code.
func (c ProjectChoices) Refused(name string) bool {
	for _, n := range c.Disabled {
		if n == name {
			return true
		}
	}
	return false
}

// Approved reports whether the user approved server name in Claude Code.
func (c ProjectChoices) Approved(name string) bool {
	if c.Refused(name) {
		return false
	}
	if c.EnableAll {
		return true
	}
	for _, n := range c.Enabled {
		if n == name {
			return true
		}
	}
	return false
}

// ClaudeProjectChoices returns the choices Claude Code keeps in data (its
// ~/.claude.json) about the .mcp.json servers of project directory dir (a
// zero ProjectChoices when it keeps none). A member of the wrong type is
// ErrFormat.
func ClaudeProjectChoices(data []byte, dir string) (ProjectChoices, error) {
	root, std, err := parseJSONC(data)
	if err != nil {
		return ProjectChoices{}, err
	}
	projects := jsonMember(root, "projects")
	if projects == nil {
		return ProjectChoices{}, nil
	}
	obj, ok := projects.Value.(*hujson.Object)
	if !ok {
		return ProjectChoices{}, fmt.Errorf("%w: \"projects\" is not an object", ErrFormat)
	}
	var c ProjectChoices
	for i := range obj.Members {
		m := &obj.Members[i]
		key, ok := literalString(m.Name)
		if !ok || !sameDir(key, dir) {
			continue
		}
		for member, into := range map[string]any{
			"enabledMcpjsonServers": &c.Enabled, "disabledMcpjsonServers": &c.Disabled, "enableAllProjectMcpServers": &c.EnableAll,
		} {
			v := jsonMember(&m.Value, member)
			if v == nil {
				continue
			}
			if err := json.Unmarshal(std[v.StartOffset:v.EndOffset], into); err != nil {
				return ProjectChoices{}, fmt.Errorf("%w: projects[%q].%s: %w", ErrFormat, key, member, err)
			}
		}
	}
	return c, nil
}
