package config

import (
	"time"

	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/zclconf/go-cty/cty"
	ctyjson "github.com/zclconf/go-cty/cty/json"
)

// writeChecks writes the hook and interceptor blocks in effect, in the
// order they run, each preceded by where it comes from (and whether it
// awaits approval).
func writeChecks(b *hclwrite.Body, cfg *Config) {
	origin := func(o Origin, approved bool) {
		s := o.Source()
		if !approved {
			s += " (not approved: run `mcphost config approve @checks`)"
		}
		b.AppendNewline()
		comment(b, s)
	}
	for _, h := range cfg.Hooks {
		origin(h.Origin, h.Approved)
		hb := b.AppendNewBlock("hook", []string{h.Event}).Body()
		setStrings(hb, [][2]string{{"matcher", h.Matcher}, {"command", h.Command}, {"shell", h.Shell}, {"url", h.URL}})
		if len(h.Env) > 0 {
			hb.SetAttributeValue("env", ctyStringMap(h.Env))
		}
		if len(h.InheritEnv) > 0 {
			hb.SetAttributeValue("inherit_env", stringList(h.InheritEnv))
		}
		if len(h.Headers) > 0 {
			hb.SetAttributeValue("headers", ctyStringMap(h.Headers))
		}
		if len(h.AllowedEnvVars) > 0 {
			hb.SetAttributeValue("allowed_env_vars", stringList(h.AllowedEnvVars))
		}
		writeCheckCommon(hb, h.Timeout, h.FailOpen, h.Mode, h.Match)
	}
	for _, ic := range cfg.Interceptors {
		origin(ic.Origin, ic.Approved)
		ib := b.AppendNewBlock("interceptor", []string{ic.Name}).Body()
		setStrings(ib, [][2]string{{"plugin", ic.Plugin}, {"server", ic.Server}, {"builtin", ic.Builtin}, {"action", ic.Action}, {"protocol", ic.Protocol}})
		if len(ic.Names) > 0 {
			ib.SetAttributeValue("names", stringList(ic.Names))
		}
		if t, err := ctyjson.ImpliedType(ic.Options); err == nil {
			if v, err := ctyjson.Unmarshal(ic.Options, t); err == nil {
				ib.SetAttributeValue("options", v)
			}
		}
		ib.SetAttributeValue("events", stringList(ic.Events))
		ib.SetAttributeValue("phases", stringList(ic.Phases))
		writeCheckCommon(ib, ic.Timeout, ic.FailOpen, ic.Mode, ic.Match)
	}
}

// writeCheckCommon writes what hooks and interceptors have in common.
func writeCheckCommon(b *hclwrite.Body, timeout time.Duration, failOpen bool, mode string, m *CheckMatch) {
	b.SetAttributeValue("timeout", cty.StringVal(timeout.String()))
	if failOpen {
		b.SetAttributeValue("fail_open", cty.True)
	}
	if mode != "" {
		b.SetAttributeValue("mode", cty.StringVal(mode))
	}
	if m == nil {
		return
	}
	mb := b.AppendNewBlock("match", nil).Body()
	if len(m.Servers) > 0 {
		mb.SetAttributeValue("servers", stringList(m.Servers))
	}
	if len(m.Tools) > 0 {
		mb.SetAttributeValue("tools", stringList(m.Tools))
	}
	if p := m.Principals; p != nil {
		pb := mb.AppendNewBlock("principals", nil).Body()
		if len(p.Groups) > 0 {
			pb.SetAttributeValue("groups", stringList(p.Groups))
		}
		if len(p.Subjects) > 0 {
			pb.SetAttributeValue("subjects", stringList(p.Subjects))
		}
	}
}

// setStrings sets the attributes whose value is not empty.
func setStrings(b *hclwrite.Body, kvs [][2]string) {
	for _, kv := range kvs {
		if kv[1] != "" {
			b.SetAttributeValue(kv[0], cty.StringVal(kv[1]))
		}
	}
}
