package config

import (
	"path/filepath"

	"github.com/hashicorp/hcl/v2"
)

// checksOfFile is what one file's hook and interceptor blocks decode to.
type checksOfFile struct {
	hooks []*Hook
	ics   []*Interceptor
	diags hcl.Diagnostics
	// kept are the blocks that decoded.
	kept map[*hcl.Block]bool
}

// decodeChecks decodes a file's hook and interceptor blocks with ctx;
// written says ctx is writtenContext (a project file before approval),
// where only expressions whose value is what is written are allowed. A
// block with an error is left out (in a project file the error is a
// warning). only, if not nil, restricts the blocks decoded: an approved
// project file's are those that decoded as written (what was approved).
func decodeChecks(df *decodedFile, ctx *hcl.EvalContext, written bool, only map[*hcl.Block]bool, projectRoot string, cfg *Config, unlocked []string) checksOfFile {
	out := checksOfFile{kept: map[*hcl.Block]bool{}}
	dir := filepath.Dir(df.path)
	if df.scope == ScopeProject || df.scope == ScopeLocal {
		dir = projectRoot
	}
	for _, b := range df.checkBlocks {
		if only != nil && !only[b] {
			continue
		}
		var d hcl.Diagnostics
		if df.scope == ScopeProject {
			d = checkWritten(b.Body)
		}
		if b.Type == "hook" {
			h, hd := decodeHook(b, df.path, df.scope, dir, ctx, written)
			if d = append(d, hd...); h != nil && !d.HasErrors() {
				out.hooks = append(out.hooks, h)
				out.kept[b] = true
			}
		} else {
			ic, id := decodeInterceptor(b, df.path, df.scope, ctx, cfg, unlocked)
			if d = append(d, id...); ic != nil && !d.HasErrors() {
				out.ics = append(out.ics, ic)
				out.kept[b] = true
			}
		}
		out.diags = append(out.diags, forScope(df.scope, d)...)
	}
	return out
}

// mergeChecks decodes every file's hook and interceptor blocks, in load
// order, into cfg.Hooks and cfg.Interceptors, after the servers (an
// interceptor may name one) and plugins are known.
//
// Trust: the project files' blocks are decoded as written (env() calls
// unevaluated) and hashed (ChecksApprovalHash); unless that hash is
// approved (approved_project_servers["@checks"], or
// approve_all_project_servers), they are kept with Approved == false and a
// warning each, and never run. Approved, they are decoded again with the
// environment. With the managed setting managed_hooks_only, every block of
// another scope is dropped, with a warning each.
func mergeChecks(cfg *Config, files []*decodedFile, ctx *hcl.EvalContext, projectRoot string, unlocked []string) hcl.Diagnostics {
	var diags hcl.Diagnostics
	written := map[*decodedFile]checksOfFile{}
	for _, df := range files {
		if df.scope == ScopeProject && len(df.checkBlocks) > 0 {
			c := decodeChecks(df, writtenContext(), true, nil, projectRoot, cfg, unlocked)
			written[df] = c
			cfg.writtenHooks = append(cfg.writtenHooks, c.hooks...)
			cfg.writtenInterceptors = append(cfg.writtenInterceptors, c.ics...)
		}
	}
	cfg.checksHash = checksHash(cfg.writtenHooks, cfg.writtenInterceptors)
	approved := cfg.checksHash != "" && (cfg.Settings.ApproveAllProjectServers ||
		cfg.Settings.ApprovedProjectServers[ApprovalKeyChecks] == cfg.checksHash)

	names := map[string]*Interceptor{}
	for _, df := range files {
		if len(df.checkBlocks) == 0 {
			continue
		}
		var c checksOfFile
		switch {
		case df.scope != ScopeProject:
			c = decodeChecks(df, ctx, false, nil, projectRoot, cfg, unlocked)
		case approved:
			// Only what decoded as written was approved (a block that
			// decodes only with the environment, say a timeout from
			// env(), was not shown and is not in the hash).
			w := written[df]
			c = decodeChecks(df, ctx, false, w.kept, projectRoot, cfg, unlocked)
			c.diags = append(w.diags, c.diags...)
		default:
			c = written[df]
		}
		diags = append(diags, c.diags...)
		ok := df.scope != ScopeProject || approved
		keep := func(o Origin, what string) bool {
			rng := o.Range
			switch {
			case cfg.Settings.ManagedHooksOnly && df.scope != ScopeManaged:
				diags = append(diags, warnf(&rng, "Ignored: managed_hooks_only",
					"The managed configuration sets managed_hooks_only = true, so only its own hook and interceptor blocks run; this %s-scope %s is ignored.", df.scope, what))
				return false
			case !ok:
				diags = append(diags, warnf(&rng, "Ignored until approved",
					"Hooks and interceptors run code on every matching call, so a project file's are ignored until approved: run `mcphost config approve @checks` (it shows them all; any later edit needs approval again)."))
			}
			return true
		}
		for _, h := range c.hooks {
			if keep(h.Origin, "hook") {
				h.Approved = ok
				if h.Timeout == 0 {
					h.Timeout = DefaultHookTimeout
				}
				cfg.Hooks = append(cfg.Hooks, h)
			}
		}
		for _, ic := range c.ics {
			if !keep(ic.Origin, "interceptor") {
				continue
			}
			if first := names[ic.Name]; first != nil {
				rng := ic.Origin.Range
				d := hcl.Diagnostics{errorf(&rng, "Duplicate interceptor",
					"An interceptor named %q is already declared at %s; interceptor names are unique across every scope (they name the check in logs and audit lines).", ic.Name, first.Origin.Source())}
				if df.scope == ScopeProject || first.Origin.Scope != ScopeProject {
					diags = append(diags, forScope(df.scope, d)...)
					continue
				}
				// A project file's interceptor (loaded earlier) never
				// stops a later scope's: the project's is dropped.
				frng := first.Origin.Range
				diags = append(diags, forScope(ScopeProject, hcl.Diagnostics{errorf(&frng, "Duplicate interceptor",
					"An interceptor named %q is also declared at %s, which takes precedence.", ic.Name, ic.Origin.Source())})...)
				cfg.Interceptors = deleteInterceptor(cfg.Interceptors, first)
			}
			names[ic.Name] = ic
			ic.Approved = ok
			if ic.Timeout == 0 {
				ic.Timeout = DefaultInterceptorTimeout
			}
			cfg.Interceptors = append(cfg.Interceptors, ic)
		}
	}
	for _, ic := range cfg.Interceptors {
		if s := cfg.Server(ic.Server); s != nil && ic.Approved {
			s.InterceptorOnly = true
		}
	}
	return diags
}

func deleteInterceptor(list []*Interceptor, ic *Interceptor) []*Interceptor {
	out := list[:0]
	for _, x := range list {
		if x != ic {
			out = append(out, x)
		}
	}
	return out
}

// checkManagedHooksOnly warns about managed_hooks_only outside the managed
// scope, where it has no effect.
func checkManagedHooksOnly(scope Scope, p *partialSettings) hcl.Diagnostics {
	if p.managedHooksOnly == nil || scope == ScopeManaged || scope == ScopeProject {
		return nil
	}
	rng := p.managedHooksOnlyRange
	return hcl.Diagnostics{warnf(&rng, "managed_hooks_only has no effect here",
		"managed_hooks_only is only honoured in the managed file (%s by default); in the %s scope it has no effect.", DefaultManagedFile, scope)}
}
