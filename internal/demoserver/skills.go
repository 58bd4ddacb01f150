package demoserver

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// With Options.Skills (-skills) the server declares the Skills extension
// (SEP-2640, io.modelcontextprotocol/skills, with directoryRead: it answers
// resources/directory/read) and
// serves two skills as resources: demo-skill (SKILL.md and
// references/GUIDE.md, listed by skills/list), whose description names the
// server, and hidden-skill (SKILL.md only), answered by skills/get but not
// listed, as the extension allows. The go-sdk serves skills/list and
// skills/get as custom methods.

// skillsExtension is the Skills extension's identifier.
const skillsExtension = "io.modelcontextprotocol/skills"

type skillFile struct {
	uri, text string
}

type demoSkill struct {
	uri         string
	frontmatter map[string]any
	files       []skillFile
	listed      bool
}

type skillResource struct {
	URI    string `json:"uri"`
	Digest string `json:"digest"`
	Size   int    `json:"size"`
}

type skillEntry struct {
	URI         string          `json:"uri"`
	Frontmatter map[string]any  `json:"frontmatter"`
	Resources   []skillResource `json:"resources"`
}

type listSkillsParams struct {
	mcp.ParamsBase
	Cursor string `json:"cursor,omitempty"`
}

type listSkillsResult struct {
	mcp.ResultBase
	ResultType string        `json:"resultType"`
	Skills     []*skillEntry `json:"skills"`
	TTLMs      int           `json:"ttlMs"`
	CacheScope string        `json:"cacheScope"`
}

type getSkillParams struct {
	mcp.ParamsBase
	URI string `json:"uri"`
}

type getSkillResult struct {
	mcp.ResultBase
	ResultType string      `json:"resultType"`
	Skill      *skillEntry `json:"skill"`
	TTLMs      int         `json:"ttlMs"`
	CacheScope string      `json:"cacheScope"`
}

// demoSkills are the skills of server.
func demoSkills(server string) []*demoSkill {
	desc := "Shows how " + server + " serves a skill"
	return []*demoSkill{
		{
			uri:         "skill://demo-skill/SKILL.md",
			frontmatter: map[string]any{"name": "demo-skill", "description": desc, "metadata": map[string]any{"server": server}},
			files: []skillFile{
				{"skill://demo-skill/SKILL.md", "---\nname: demo-skill\ndescription: " + desc + "\nmetadata:\n  server: " + server + "\n---\n\nRead references/GUIDE.md.\n"},
				{"skill://demo-skill/references/GUIDE.md", "The guide of " + server + ".\n"},
			},
			listed: true,
		},
		{
			uri:         "skill://hidden-skill/SKILL.md",
			frontmatter: map[string]any{"name": "hidden-skill", "description": "An unlisted skill of " + server},
			files:       []skillFile{{"skill://hidden-skill/SKILL.md", "---\nname: hidden-skill\ndescription: An unlisted skill of " + server + "\n---\n"}},
		},
	}
}

func (d *demoSkill) entry() *skillEntry {
	e := &skillEntry{URI: d.uri, Frontmatter: d.frontmatter}
	for _, f := range d.files {
		sum := sha256.Sum256([]byte(f.text))
		e.Resources = append(e.Resources, skillResource{URI: f.uri, Digest: "sha256:" + hex.EncodeToString(sum[:]), Size: len(f.text)})
	}
	return e
}

// addSkills serves server's skills on s (see the comment above); with
// requireClient, only to clients that declared the extension.
func addSkills(s *mcp.Server, server string, requireClient bool) {
	skills := demoSkills(server)
	for _, sk := range skills {
		for _, f := range sk.files {
			text := f.text
			r := &mcp.Resource{URI: f.uri, Name: f.uri, MIMEType: "text/markdown"}
			if f.uri == sk.uri { // (its SKILL.md: named and described as its frontmatter says)
				r.Name, _ = sk.frontmatter["name"].(string)
				r.Description, _ = sk.frontmatter["description"].(string)
			}
			s.AddResource(r,
				func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
					return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/markdown", Text: text}}}, nil
				})
		}
	}
	mcp.AddReceivingCustomMethod(s, "skills/list", func(_ context.Context, ss *mcp.ServerSession, p *listSkillsParams) (*listSkillsResult, error) {
		if err := requireSkillsClient(requireClient, ss, p.Meta); err != nil {
			return nil, err
		}
		res := &listSkillsResult{ResultType: "complete", Skills: []*skillEntry{}, TTLMs: 60000, CacheScope: "public"}
		for _, sk := range skills {
			if sk.listed {
				res.Skills = append(res.Skills, sk.entry())
			}
		}
		sort.Slice(res.Skills, func(i, j int) bool { return res.Skills[i].URI < res.Skills[j].URI })
		return res, nil
	})
	mcp.AddReceivingCustomMethod(s, "skills/get", func(_ context.Context, ss *mcp.ServerSession, p *getSkillParams) (*getSkillResult, error) {
		if err := requireSkillsClient(requireClient, ss, p.Meta); err != nil {
			return nil, err
		}
		for _, sk := range skills {
			if sk.uri == p.URI {
				return &getSkillResult{ResultType: "complete", Skill: sk.entry(), TTLMs: 60000, CacheScope: "public"}, nil
			}
		}
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("No skill is served at %s", p.URI)}
	})
	mcp.AddReceivingCustomMethod(s, "resources/directory/read", func(_ context.Context, _ *mcp.ServerSession, p *readDirectoryParams) (*readDirectoryResult, error) {
		children, ok := directory(skills, p.URI)
		if !ok {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("%s is not a directory resource", p.URI)}
		}
		return &readDirectoryResult{ResultType: "complete", Resources: children}, nil
	})
}

type readDirectoryParams struct {
	mcp.ParamsBase
	URI    string `json:"uri"`
	Cursor string `json:"cursor,omitempty"`
}

type readDirectoryResult struct {
	mcp.ResultBase
	ResultType string          `json:"resultType"`
	Resources  []*mcp.Resource `json:"resources"`
}

// directory lists the direct children of the directory dir of skills
// (files, and subdirectories as inode/directory); ok is false if dir is
// no directory of theirs.
func directory(skills []*demoSkill, dir string) (children []*mcp.Resource, ok bool) {
	seen := map[string]bool{}
	for _, sk := range skills {
		for _, f := range sk.files {
			rest, found := strings.CutPrefix(f.uri, dir+"/")
			if !found {
				continue
			}
			ok = true
			name, _, sub := strings.Cut(rest, "/")
			if seen[name] {
				continue
			}
			seen[name] = true
			if sub {
				children = append(children, &mcp.Resource{URI: dir + "/" + name, Name: name, MIMEType: "inode/directory"})
			} else {
				children = append(children, &mcp.Resource{URI: f.uri, Name: name, MIMEType: "text/markdown"})
			}
		}
	}
	sort.Slice(children, func(i, j int) bool { return children[i].URI < children[j].URI })
	return children, ok
}

// requireSkillsClient refuses, if require, a request of a client that did
// not declare the Skills extension (as some servers of the extension do): at
// initialize (a session before 2026-07-28), or in the request's _meta.
func requireSkillsClient(require bool, ss *mcp.ServerSession, meta mcp.Meta) error {
	if !require {
		return nil
	}
	if caps, ok := meta[mcp.MetaKeyClientCapabilities].(map[string]any); ok {
		if ext, ok := caps["extensions"].(map[string]any); ok && ext[skillsExtension] != nil {
			return nil
		}
	} else if ip := ss.InitializeParams(); ip != nil && ip.Capabilities != nil && ip.Capabilities.Extensions[skillsExtension] != nil {
		return nil
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "the client did not declare " + skillsExtension}
}

// skillsSettings are the extension's settings the server declares.
var skillsSettings = json.RawMessage(`{"directoryRead":true}`)
