package config

import (
	"slices"

	"github.com/hashicorp/hcl/v2"

	"github.com/mcphost/mcphost/host/permissions"
)

// Schemas of the permissions block (tool permission rules of any scope)
// and the policy block (the managed server policy).
var (
	permissionsSchema = &hcl.BodySchema{
		Attributes: []hcl.AttributeSchema{{Name: "allow"}, {Name: "ask"}, {Name: "deny"}, {Name: "default_mode"}},
		Blocks:     []hcl.BlockHeaderSchema{{Type: "for_principals"}},
	}
	forPrincipalsSchema = &hcl.BodySchema{
		Attributes: []hcl.AttributeSchema{{Name: "groups"}, {Name: "subjects"}},
	}
	policySchema = &hcl.BodySchema{
		Attributes: []hcl.AttributeSchema{{Name: "allowed_servers"}, {Name: "denied_servers"}},
	}
)

// decodePermissions decodes a permissions block: pattern lists, each pattern
// validated at its own range, and the default mode.
func decodePermissions(b *hcl.Block, out *decodedFile, ctx *hcl.EvalContext) hcl.Diagnostics {
	content, diags := b.Body.Content(permissionsSchema)
	diags = explainUnsupported(diags, permissionsSchema)
	var who *permissions.Principals
	for i, fb := range content.Blocks {
		if i > 0 {
			diags = append(diags, errorf(&fb.DefRange, "Duplicate for_principals block",
				"A permissions block has at most one for_principals; write another permissions block for other principals."))
			continue
		}
		var d hcl.Diagnostics
		who, d = decodeForPrincipals(fb, ctx)
		diags = append(diags, d...)
		if who == nil {
			return diags // its rules must not apply to everyone
		}
	}
	for _, kind := range []struct {
		attr string
		b    permissions.Behavior
	}{{"deny", permissions.Deny}, {"ask", permissions.Ask}, {"allow", permissions.Allow}} {
		a := content.Attributes[kind.attr]
		if a == nil {
			continue
		}
		elems, d := hcl.ExprList(a.Expr)
		if d.HasErrors() {
			diags = append(diags, errorf(a.Expr.Range().Ptr(), "Invalid permission list", "%s must be a list of patterns, e.g. [\"mcp__github__*\"].", kind.attr))
			continue
		}
		for _, e := range elems {
			var pattern string
			if d := decodeExpr(e, ctx, &pattern); d.HasErrors() {
				diags = append(diags, d...)
				continue
			}
			rng := e.Range()
			if err := permissions.ValidatePattern(kind.b, pattern); err != nil {
				diags = append(diags, errorf(&rng, "Invalid permission pattern", "%s.", err))
				continue
			}
			out.rules = append(out.rules, PermissionRule{Behavior: kind.b, Pattern: pattern, For: who, Origin: Origin{Scope: out.scope, File: out.path, Range: rng}})
		}
	}
	if a := content.Attributes["default_mode"]; a != nil && who != nil {
		diags = append(diags, errorf(a.NameRange.Ptr(), "default_mode for some principals",
			"default_mode applies to everyone; set it in a permissions block without for_principals."))
	} else if a != nil {
		var mode string
		diags = append(diags, decodeExpr(a.Expr, ctx, &mode)...)
		if !slices.Contains(permissions.Modes, permissions.Mode(mode)) {
			diags = append(diags, errorf(a.Expr.Range().Ptr(), "Invalid default mode", "default_mode %q is not one of ask, allow_all, deny.", mode))
		} else {
			out.mode, out.modeRange = mode, a.Expr.Range()
		}
	}
	return diags
}

// decodeForPrincipals decodes a for_principals block: groups and subjects,
// at least one of them not empty. nil with errors if it is invalid.
func decodeForPrincipals(b *hcl.Block, ctx *hcl.EvalContext) (*permissions.Principals, hcl.Diagnostics) {
	content, diags := b.Body.Content(forPrincipalsSchema)
	diags = explainUnsupported(diags, forPrincipalsSchema)
	p := &permissions.Principals{}
	for name, dst := range map[string]*[]string{"groups": &p.Groups, "subjects": &p.Subjects} {
		if a := content.Attributes[name]; a != nil {
			diags = append(diags, decodeExpr(a.Expr, ctx, dst)...)
			if slices.Contains(*dst, "") {
				diags = append(diags, errorf(a.Expr.Range().Ptr(), "Empty "+name[:len(name)-1], "%s may not contain an empty string.", name))
			}
		}
	}
	if len(p.Groups) == 0 && len(p.Subjects) == 0 && !diags.HasErrors() {
		diags = append(diags, errorf(&b.DefRange, "Empty for_principals",
			"for_principals names whom the block's rules apply to: set groups = [\"eng\"] (the token's groups claim) or subjects = [\"…\"] (its sub claim)."))
	}
	if diags.HasErrors() {
		return nil, diags
	}
	return p, diags
}

// decodePolicy decodes the managed server policy. Each entry is an object with
// exactly one of name, url (a wildcard pattern) or command (argv, each
// element a wildcard pattern).
func decodePolicy(b *hcl.Block, out *decodedFile, ctx *hcl.EvalContext) hcl.Diagnostics {
	content, diags := b.Body.Content(policySchema)
	diags = explainUnsupported(diags, policySchema)
	for _, list := range []struct {
		attr string
		dst  *[]*ServerMatcher
	}{{"allowed_servers", &out.allowed}, {"denied_servers", &out.denied}} {
		a := content.Attributes[list.attr]
		if a == nil {
			continue
		}
		if list.attr == "allowed_servers" {
			out.hasAllowList = true
		}
		elems, d := hcl.ExprList(a.Expr)
		if d.HasErrors() {
			diags = append(diags, errorf(a.Expr.Range().Ptr(), "Invalid server policy", "%s must be a list of entries like { name = \"github\" }, { url = \"https://*.corp.example/*\" } or { command = [\"npx\", \"-y\", \"@corp/mcp-*\"] }.", list.attr))
			continue
		}
		for _, e := range elems {
			v, d := e.Value(ctx)
			rng := e.Range()
			if d.HasErrors() {
				diags = append(diags, d...)
				continue
			}
			if !v.Type().IsObjectType() {
				diags = append(diags, errorf(&rng, "Invalid server policy entry", "An entry is an object with one of name, url or command."))
				continue
			}
			sm := &ServerMatcher{Origin: Origin{Scope: out.scope, File: out.path, Range: rng}}
			n := 0
			for attr := range v.Type().AttributeTypes() {
				switch attr {
				case "name":
					diags = append(diags, decodeExpr(hcl.StaticExpr(v.GetAttr("name"), rng), nil, &sm.Name)...)
					n++
				case "url":
					diags = append(diags, decodeExpr(hcl.StaticExpr(v.GetAttr("url"), rng), nil, &sm.URL)...)
					n++
				case "command":
					diags = append(diags, decodeExpr(hcl.StaticExpr(v.GetAttr("command"), rng), nil, &sm.Command)...)
					n++
				default:
					diags = append(diags, errorf(&rng, "Invalid server policy entry", "%q is not allowed in a policy entry; use name, url or command.", attr))
				}
			}
			if n != 1 {
				diags = append(diags, errorf(&rng, "Invalid server policy entry", "An entry names exactly one of name, url or command."))
				continue
			}
			*list.dst = append(*list.dst, sm)
		}
	}
	return diags
}

// mergePermissions collects every scope's rules (deny > ask > allow applies
// across scopes, so no scope can loosen a stricter rule of another) and takes
// the default mode from the highest scope that sets it. A project cannot
// loosen anything: its allow rules and an allow_all mode are ignored, with a
// warning.
func mergePermissions(cfg *Config, files []*decodedFile) hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, f := range files {
		for _, r := range f.rules {
			if f.scope == ScopeProject && r.Behavior == permissions.Allow {
				rng := r.Origin.Range
				diags = append(diags, warnf(&rng, "Ignored in project scope",
					"allow rules are only honoured in the user, local, cli and managed scopes: a project cannot allow its own tools (deny and ask rules are honoured)."))
				continue
			}
			cfg.Permissions = append(cfg.Permissions, r)
		}
		if f.mode == "" {
			continue
		}
		if f.scope == ScopeProject && f.mode == string(permissions.ModeAllowAll) {
			rng := f.modeRange
			diags = append(diags, warnf(&rng, "Ignored in project scope", "default_mode = \"allow_all\" is not honoured in the project scope."))
			continue
		}
		cfg.DefaultMode = f.mode
		cfg.DefaultModeOrigin = &Origin{Scope: f.scope, File: f.path, Range: f.modeRange}
	}
	return diags
}

// applyServerPolicy marks the servers the managed policy blocks: any on the
// denylist (which always wins), and, when an allowlist exists, any not on it.
func applyServerPolicy(cfg *Config, files []*decodedFile) {
	var allowed, denied []*ServerMatcher
	hasAllow := false
	for _, f := range files {
		if f.scope == ScopeManaged {
			allowed, denied = append(allowed, f.allowed...), append(denied, f.denied...)
			hasAllow = hasAllow || f.hasAllowList
		}
	}
	for _, s := range cfg.Servers {
		s.BlockedBy = ""
		for _, m := range denied {
			if m.Matches(s) {
				s.BlockedBy = "denied_servers entry " + m.String()
				break
			}
		}
		if s.BlockedBy != "" || !hasAllow {
			continue
		}
		ok := false
		for _, m := range allowed {
			ok = ok || m.Matches(s)
		}
		if !ok {
			s.BlockedBy = "not on the managed allowed_servers list"
		}
	}
}
