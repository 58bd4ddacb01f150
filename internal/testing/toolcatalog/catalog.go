// Package toolcatalog is a synthetic but realistic catalogue of MCP tools
// for measuring tool search: 50 fictional servers of 20 tools each (a code
// host, an issue tracker, chat, a file system, databases, clouds, a calendar,
// mail, payments, …), their names, titles, descriptions and input schemas
// written as real servers write them (some with titles, some in camelCase,
// CRUD families and one-off tools), and queries phrased as a user or a
// model would ask, each with the tool(s) that answer it.
//
// Everything is built by code, deterministically: the same catalogue on
// every run, with no files to keep in sync.
package toolcatalog

import (
	"context"
	"fmt"
	"hash/fnv"
	"sort"
	"strings"
	"unicode"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ToolsPerServer is how many tools each server offers.
const ToolsPerServer = 20

// param is one input parameter.
type param struct {
	name, typ, desc string
	enum            []string
	required        bool
}

func str(name, desc string) param  { return param{name: name, typ: "string", desc: desc} }
func num(name, desc string) param  { return param{name: name, typ: "integer", desc: desc} }
func flag(name, desc string) param { return param{name: name, typ: "boolean", desc: desc} }
func strs(name, desc string) param { return param{name: name, typ: "array", desc: desc} }
func obj(name, desc string) param  { return param{name: name, typ: "object", desc: desc} }
func enum(name, desc string, vals ...string) param {
	return param{name: name, typ: "string", desc: desc, enum: vals}
}

// req marks a parameter required.
func (p param) req() param { p.required = true; return p }

// entity is a kind of thing a server manages, offered as a family of
// tools: verbs holds l(ist), g(et), c(reate), u(pdate), d(elete) and
// s(earch).
type entity struct {
	noun, plural string
	what         string // a sentence saying what one is
	verbs        string
	fields       []param // set by create and update
	filters      []param // list filters
}

// extra is a tool of its own.
type extra struct {
	name, desc string
	params     []param
	readOnly   bool
}

// server is one fictional server.
type server struct {
	name  string
	where string // " in a repository": where the entities live, for descriptions
	// scope parameters come first on every entity tool (owner, repo).
	scope    []param
	titles   bool // the server gives its tools titles
	camel    bool // the server names tools and parameters in camelCase
	extras   []extra
	entities []entity
}

func x(name, desc string, ps ...param) extra { return extra{name: name, desc: desc, params: ps} }
func ro(name, desc string, ps ...param) extra {
	return extra{name: name, desc: desc, params: ps, readOnly: true}
}

// Server is one server of the catalogue and its tools, as it lists them.
type Server struct {
	Name  string
	Tools []*mcp.Tool
}

// Servers returns the catalogue: 50 servers, ToolsPerServer tools each, in
// name order.
func Servers() []Server {
	var out []Server
	for _, s := range servers {
		out = append(out, Server{Name: s.name, Tools: s.tools()})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Source serves the catalogue's lists: it implements registry.Source, so
// that registry.New(toolcatalog.Source{}) holds the catalogue as a host's
// registry would.
type Source struct{}

// ListTools returns a server's tools.
func (Source) ListTools(_ context.Context, server string) ([]*mcp.Tool, error) {
	for _, s := range servers {
		if s.name == server {
			return s.tools(), nil
		}
	}
	return nil, fmt.Errorf("toolcatalog: no server %q", server)
}

// ListPrompts returns nothing: the catalogue has tools only.
func (Source) ListPrompts(context.Context, string) ([]*mcp.Prompt, error) { return nil, nil }

// ListResources returns nothing.
func (Source) ListResources(context.Context, string) ([]*mcp.Resource, error) { return nil, nil }

// ListResourceTemplates returns nothing.
func (Source) ListResourceTemplates(context.Context, string) ([]*mcp.ResourceTemplate, error) {
	return nil, nil
}

// Names returns the servers' names, in order.
func Names() []string {
	var out []string
	for _, s := range Servers() {
		out = append(out, s.Name)
	}
	return out
}

// tools builds a server's tools: its own tools first, then its entities'
// families, the first ToolsPerServer of them.
func (s *server) tools() []*mcp.Tool {
	var out []*mcp.Tool
	for _, e := range s.extras {
		out = append(out, s.tool(e.name, e.desc, e.params, e.readOnly))
	}
	for _, e := range s.entities {
		out = append(out, s.family(e)...)
	}
	if len(out) > ToolsPerServer {
		out = out[:ToolsPerServer]
	}
	return out
}

// tool builds one tool definition.
func (s *server) tool(name, desc string, ps []param, readOnly bool) *mcp.Tool {
	t := &mcp.Tool{Name: s.ident(name), Description: desc, InputSchema: s.schema(ps)}
	if s.titles {
		t.Title = title(name)
	}
	if readOnly {
		t.Annotations = &mcp.ToolAnnotations{ReadOnlyHint: true}
	} else if strings.HasPrefix(name, "delete_") || strings.HasPrefix(name, "remove_") {
		yes := true
		t.Annotations = &mcp.ToolAnnotations{DestructiveHint: &yes}
	}
	return t
}

// schema builds an input schema.
func (s *server) schema(ps []param) map[string]any {
	props := map[string]any{}
	var required []string
	for _, p := range ps {
		m := map[string]any{"type": p.typ}
		if p.desc != "" {
			m["description"] = p.desc
		}
		if len(p.enum) > 0 {
			m["enum"] = append([]string(nil), p.enum...)
		}
		if p.typ == "array" {
			m["items"] = map[string]any{"type": "string"}
		}
		name := s.ident(p.name)
		props[name] = m
		if p.required {
			required = append(required, name)
		}
	}
	out := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		out["required"] = required
	}
	return out
}

// ident spells a snake_case identifier in the server's style.
func (s *server) ident(snake string) string {
	if !s.camel {
		return snake
	}
	parts := strings.Split(snake, "_")
	for i := 1; i < len(parts); i++ {
		if parts[i] != "" {
			parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
		}
	}
	return strings.Join(parts, "")
}

// title is a title for a snake_case tool name: "list_pull_requests" →
// "List pull requests".
func title(snake string) string {
	t := strings.ReplaceAll(snake, "_", " ")
	r := []rune(t)
	r[0] = unicode.ToUpper(r[0])
	return string(r)
}

// pick chooses one of variants, by a hash of key: the catalogue varies its
// phrasing as real servers do, the same way on every run.
func pick(key string, variants ...string) string {
	h := fnv.New32a()
	h.Write([]byte(key))
	return variants[int(h.Sum32()%uint32(len(variants)))]
}

// family builds an entity's tools.
func (s *server) family(e entity) []*mcp.Tool {
	snake := strings.ReplaceAll(e.noun, " ", "_")
	snakes := strings.ReplaceAll(e.plural, " ", "_")
	id := num(snake+"_id", "ID of the "+e.noun+".").req()
	if e.noun == "file" || e.noun == "page" || e.noun == "key" {
		id = str(snake+"_id", "ID of the "+e.noun+".").req()
	}
	names := func(ps []param) string {
		var n []string
		for _, p := range ps {
			n = append(n, strings.ReplaceAll(p.name, "_", " "))
		}
		switch len(n) {
		case 0:
			return ""
		case 1:
			return n[0]
		}
		return strings.Join(n[:len(n)-1], ", ") + " or " + n[len(n)-1]
	}
	with := func(extra ...param) []param { return append(append([]param(nil), s.scope...), extra...) }
	key := s.name + "/" + e.noun
	var out []*mcp.Tool
	for _, v := range e.verbs {
		switch v {
		case 'l':
			desc := pick(key+"l",
				fmt.Sprintf("List %s%s. Results are paginated; pass the returned cursor to get the next page.", e.plural, s.where),
				fmt.Sprintf("Returns the %s%s, most recent first.", e.plural, s.where),
				fmt.Sprintf("Lists %s%s.", e.plural, s.where))
			if len(e.filters) > 0 {
				desc += " Filter by " + names(e.filters) + "."
			}
			ps := with(e.filters...)
			ps = append(ps, num("limit", "Maximum number of results (default 30, max 100)."), str("cursor", "Pagination cursor from a previous call."))
			out = append(out, s.tool("list_"+snakes, desc, ps, true))
		case 'g':
			desc := pick(key+"g",
				fmt.Sprintf("Get a %s by ID, with all its fields.", e.noun),
				fmt.Sprintf("Fetch the full details of one %s.", e.noun),
				fmt.Sprintf("Retrieves a single %s.", e.noun))
			out = append(out, s.tool("get_"+snake, desc, with(id), true))
		case 'c':
			desc := pick(key+"c",
				fmt.Sprintf("Create a %s%s. %s", e.noun, s.where, e.what),
				fmt.Sprintf("Creates a new %s%s. %s", e.noun, s.where, e.what),
				fmt.Sprintf("Add a %s%s. %s", e.noun, s.where, e.what))
			ps := with()
			for i, f := range e.fields {
				if i == 0 {
					f = f.req()
				}
				ps = append(ps, f)
			}
			out = append(out, s.tool("create_"+snake, desc, ps, false))
		case 'u':
			desc := pick(key+"u",
				fmt.Sprintf("Update a %s: change its %s. Fields left out keep their values.", e.noun, names(e.fields)),
				fmt.Sprintf("Modify an existing %s (%s).", e.noun, names(e.fields)),
				fmt.Sprintf("Edit a %s.", e.noun))
			out = append(out, s.tool("update_"+snake, desc, with(append([]param{id}, e.fields...)...), false))
		case 'd':
			desc := pick(key+"d",
				fmt.Sprintf("Delete a %s. This cannot be undone.", e.noun),
				fmt.Sprintf("Permanently remove a %s.", e.noun),
				fmt.Sprintf("Deletes the %s with the given ID.", e.noun))
			out = append(out, s.tool("delete_"+snake, desc, with(id), false))
		case 's':
			desc := pick(key+"s",
				fmt.Sprintf("Search %s by keywords%s.", e.plural, s.where),
				fmt.Sprintf("Full-text search over %s%s; returns the best matches first.", e.plural, s.where))
			ps := with(str("query", "Search terms.").req(), num("limit", "Maximum number of results."))
			out = append(out, s.tool("search_"+snakes, desc, ps, true))
		}
	}
	return out
}
