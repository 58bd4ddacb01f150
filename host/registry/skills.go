package registry

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The Skills extension (SEP-2640, io.modelcontextprotocol/skills): a server
// that declares it serves Agent Skills as resources (conventionally
// skill://PATH/NAME/FILE) and answers skills/list (every skill's entry:
// its SKILL.md URI, its frontmatter verbatim, the digests of its files) and
// skills/get (one entry, by the URI of its SKILL.md). The wire types are
// here, shared by the host (which sends them upstream) and the gateway
// (which serves them downstream).

// ExtensionSkills is the identifier of the Skills extension.
const ExtensionSkills = "io.modelcontextprotocol/skills"

// The Skills extension's methods. resources/directory/read is optional: a
// server implements it if its settings say directoryRead: true.
const (
	MethodListSkills    = "skills/list"
	MethodGetSkill      = "skills/get"
	MethodReadDirectory = "resources/directory/read"
)

// Skill is a skill's entry (skills/list, skills/get). Frontmatter and
// Resources are kept as the server sent them: the frontmatter must stay
// identical to the SKILL.md it describes (hosts compare them), so it is
// neither sanitized nor re-encoded; only resource URIs are rewritten (see
// RewriteSkill).
type Skill struct {
	// URI is the resource URI of the skill's SKILL.md.
	URI string `json:"uri"`
	// Frontmatter is the SKILL.md frontmatter as a JSON object.
	Frontmatter json.RawMessage `json:"frontmatter"`
	// Resources is an array of {uri, digest, size}, or the string
	// "dynamic".
	Resources json.RawMessage `json:"resources,omitempty"`
	// Meta is the entry's _meta, if any.
	Meta mcp.Meta `json:"_meta,omitempty"`
}

// ListSkillsParams are the params of skills/list.
type ListSkillsParams struct {
	mcp.ParamsBase
	Cursor string `json:"cursor,omitempty"`
}

// ListSkillsResult is the result of skills/list.
type ListSkillsResult struct {
	mcp.ResultBase
	ResultType string   `json:"resultType,omitempty"`
	Skills     []*Skill `json:"skills"`
	NextCursor string   `json:"nextCursor,omitempty"`
	// TTLMs and CacheScope are the list-caching attributes (2026-07-28).
	TTLMs      *int   `json:"ttlMs,omitempty"`
	CacheScope string `json:"cacheScope,omitempty"`
}

// GetSkillParams are the params of skills/get.
type GetSkillParams struct {
	mcp.ParamsBase
	URI string `json:"uri"`
}

// GetSkillResult is the result of skills/get.
type GetSkillResult struct {
	mcp.ResultBase
	ResultType string `json:"resultType,omitempty"`
	Skill      *Skill `json:"skill"`
	TTLMs      *int   `json:"ttlMs,omitempty"`
	CacheScope string `json:"cacheScope,omitempty"`
}

// ReadDirectoryParams are the params of resources/directory/read.
type ReadDirectoryParams struct {
	mcp.ParamsBase
	URI    string `json:"uri"`
	Cursor string `json:"cursor,omitempty"`
}

// ReadDirectoryResult is the result of resources/directory/read: the
// directory's direct children (a subdirectory's mimeType is
// inode/directory).
type ReadDirectoryResult struct {
	mcp.ResultBase
	ResultType string          `json:"resultType,omitempty"`
	Resources  []*mcp.Resource `json:"resources"`
	NextCursor string          `json:"nextCursor,omitempty"`
}

// ServerSkill is a skill attributed to its server (its own URIs).
type ServerSkill struct {
	Server string
	*Skill
}

// QualifyURI returns uri with label inserted as its first path segment,
// after the scheme: skill://git-workflow/SKILL.md under label "github" is
// skill://github/git-workflow/SKILL.md. The skill's name (the segment
// before SKILL.md) is kept, as the extension requires; label becomes part
// of the skill's organizational prefix. A URI without "://" is returned
// unchanged with ok false.
func QualifyURI(uri, label string) (string, bool) {
	scheme, rest, ok := strings.Cut(uri, "://")
	if !ok || scheme == "" || label == "" {
		return uri, false
	}
	return scheme + "://" + label + "/" + rest, true
}

// UnqualifyURI is the inverse of QualifyURI: the label that uri's first
// segment holds, and uri without it. ok is false when uri has no scheme
// or no segment after the label.
func UnqualifyURI(uri string) (label, orig string, ok bool) {
	scheme, rest, found := strings.Cut(uri, "://")
	if !found || scheme == "" {
		return "", "", false
	}
	label, rest, found = strings.Cut(rest, "/")
	if !found || label == "" || rest == "" {
		return "", "", false
	}
	return label, scheme + "://" + rest, true
}

// RewriteSkill returns a copy of s with its URI and the URIs of its
// resources mapped by f (the frontmatter is shared, never changed). An
// entry whose resources are neither an array nor "dynamic" is returned
// with an error: it is not served.
func RewriteSkill(s *Skill, f func(string) string) (*Skill, error) {
	if s == nil || s.URI == "" {
		return nil, fmt.Errorf("a skill entry without a uri")
	}
	if len(s.Frontmatter) == 0 || s.Frontmatter[0] != '{' {
		return nil, fmt.Errorf("skill %s: frontmatter is not an object", s.URI)
	}
	c := *s
	c.URI = f(s.URI)
	rs := strings.TrimSpace(string(s.Resources))
	switch {
	case rs == "":
		// (Invalid per the extension; hosts decline to load it, and the
		// gateway passes it on as it came.)
	case rs == `"dynamic"`:
	case strings.HasPrefix(rs, "["):
		var items []map[string]json.RawMessage
		if err := json.Unmarshal(s.Resources, &items); err != nil {
			return nil, fmt.Errorf("skill %s: resources: %w", s.URI, err)
		}
		for _, it := range items {
			var u string
			if err := json.Unmarshal(it["uri"], &u); err != nil {
				return nil, fmt.Errorf("skill %s: a resource without a uri", s.URI)
			}
			b, _ := json.Marshal(f(u))
			it["uri"] = b
		}
		b, err := json.Marshal(items)
		if err != nil {
			return nil, fmt.Errorf("skill %s: resources: %w", s.URI, err)
		}
		c.Resources = b
	default:
		return nil, fmt.Errorf("skill %s: resources are neither an array nor \"dynamic\"", s.URI)
	}
	return &c, nil
}
