package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/gohcl"
	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/zclconf/go-cty/cty"
)

// Lock is the plugin lock file: for each plugin, the sha256 of its binary and
// what it provides, recorded by `mcphost plugins lock` (in the spirit of
// Terraform's .terraform.lock.hcl). The host verifies a binary against it
// before every start.
type Lock struct {
	Plugins []*LockedPlugin `hcl:"plugin,block"`
}

// LockedPlugin is one plugin's entry.
type LockedPlugin struct {
	Name        string   `hcl:"name,label" json:"name"`
	Path        string   `hcl:"path" json:"path"`
	SHA256      string   `hcl:"sha256" json:"sha256"`
	Version     string   `hcl:"version,optional" json:"version,omitempty"`
	Protocol    int      `hcl:"protocol" json:"protocol"`
	Transports  []string `hcl:"transports,optional" json:"transports,omitempty"`
	AuthSchemes []string `hcl:"auth_schemes,optional" json:"auth_schemes,omitempty"`
	Headers     bool     `hcl:"headers,optional" json:"headers,omitempty"`
	// Interceptor says the plugin provides an interceptor (its schema is
	// the component of kind "interceptor").
	Interceptor bool `hcl:"interceptor,optional" json:"interceptor,omitempty"`
	// Components hold the configuration schema of each part the plugin provides.
	Components []*LockedComponent `hcl:"component,block" json:"components,omitempty"`
}

// LockedComponent is the configuration schema a plugin reported for one of
// its transports, auth schemes or its headers helper.
type LockedComponent struct {
	Kind       string             `hcl:"kind,label" json:"kind"` // "transport", "auth", "headers" or "interceptor"
	Name       string             `hcl:"name,label" json:"name"`
	Attributes []*LockedAttribute `hcl:"attribute,block" json:"attributes,omitempty"`
}

// LockedAttribute is one configuration attribute of a component.
type LockedAttribute struct {
	Name     string `hcl:"name,label" json:"name"`
	Type     string `hcl:"type" json:"type"` // string, number, bool, list(string), map(string)
	Required bool   `hcl:"required,optional" json:"required,omitempty"`
	// Sensitive marks a secret: `config show` redacts its value.
	Sensitive bool `hcl:"sensitive,optional" json:"sensitive,omitempty"`
}

// Component returns the schema of one component, or nil.
func (l *LockedPlugin) Component(kind, name string) *LockedComponent {
	for _, c := range l.Components {
		if c.Kind == kind && c.Name == name {
			return c
		}
	}
	return nil
}

// ReadLock reads a lock file. A missing file is an empty lock.
func ReadLock(path string) (*Lock, hcl.Diagnostics) {
	b, err := readConfigFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &Lock{}, nil
	}
	if err == nil {
		err = CheckOwner(path)
	}
	if err != nil {
		return &Lock{}, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Cannot read the plugin lock file", Detail: fmt.Sprintf("%s: %v", path, err)}}
	}
	f, diags := hclparse.NewParser().ParseHCL(b, path)
	if diags.HasErrors() {
		return &Lock{}, diags
	}
	var l Lock
	diags = append(diags, gohcl.DecodeBody(f.Body, nil, &l)...)
	for _, p := range l.Plugins {
		if !validSHA256(p.SHA256) {
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid checksum in the lock file",
				Detail: fmt.Sprintf("plugin %q in %s has sha256 %q; run `mcphost plugins lock` again.", p.Name, path, p.SHA256)})
		}
	}
	return &l, diags
}

// Find returns the entry for a plugin name, or nil.
func (l *Lock) Find(name string) *LockedPlugin {
	for _, p := range l.Plugins {
		if p.Name == name {
			return p
		}
	}
	return nil
}

// WriteLock writes the lock file atomically (owner-only), entries sorted by name.
func WriteLock(path string, l *Lock) error {
	sort.Slice(l.Plugins, func(i, j int) bool { return l.Plugins[i].Name < l.Plugins[j].Name })
	f := hclwrite.NewEmptyFile()
	body := f.Body()
	body.AppendUnstructuredTokens(hclwrite.Tokens{{Bytes: []byte("# Written by `mcphost plugins lock`. Each plugin binary is verified against its\n# sha256 before it starts; run the command again after updating a plugin.\n")}})
	for _, p := range l.Plugins {
		body.AppendNewline()
		b := body.AppendNewBlock("plugin", []string{p.Name}).Body()
		b.SetAttributeValue("path", cty.StringVal(p.Path))
		b.SetAttributeValue("sha256", cty.StringVal(p.SHA256))
		if p.Version != "" {
			b.SetAttributeValue("version", cty.StringVal(p.Version))
		}
		b.SetAttributeValue("protocol", cty.NumberIntVal(int64(p.Protocol)))
		b.SetAttributeValue("transports", stringList(p.Transports))
		b.SetAttributeValue("auth_schemes", stringList(p.AuthSchemes))
		b.SetAttributeValue("headers", cty.BoolVal(p.Headers))
		if p.Interceptor {
			b.SetAttributeValue("interceptor", cty.True)
		}
		for _, c := range p.Components {
			cb := b.AppendNewBlock("component", []string{c.Kind, c.Name}).Body()
			for _, a := range c.Attributes {
				ab := cb.AppendNewBlock("attribute", []string{a.Name}).Body()
				ab.SetAttributeValue("type", cty.StringVal(a.Type))
				if a.Required {
					ab.SetAttributeValue("required", cty.True)
				}
				if a.Sensitive {
					ab.SetAttributeValue("sensitive", cty.True)
				}
			}
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return WriteFileAtomic(path, f.Bytes(), 0o600)
}

// WriteFileAtomic writes data to path through a temporary file in the same
// directory and a rename, so that a reader (or a crash) sees the old file or
// the new one, never a partial one.
func WriteFileAtomic(path string, data []byte, mode os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

func stringList(v []string) cty.Value {
	if len(v) == 0 {
		return cty.ListValEmpty(cty.String)
	}
	vals := make([]cty.Value, len(v))
	for i, s := range v {
		vals[i] = cty.StringVal(s)
	}
	return cty.ListVal(vals)
}

// discoverPlugins lists the executable regular files in dir as plugins.
func discoverPlugins(dir string) ([]*Plugin, error) {
	var oe *OwnerError
	if err := CheckOwner(dir); errors.As(err, &oe) {
		return nil, err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil // no plugin directory: nothing discovered
	}
	var out []*Plugin
	for _, e := range entries {
		info, err := e.Info()
		if err != nil || !info.Mode().IsRegular() || !Executable(e.Name(), info) || !ValidServerName(PluginName(e.Name())) {
			continue
		}
		if CheckOwner(filepath.Join(dir, e.Name())) != nil {
			continue // the runtime would refuse it; a stranger's file is not discovered
		}
		out = append(out, &Plugin{Name: PluginName(e.Name()), Path: filepath.Join(dir, e.Name()), Discovered: true, Origin: Origin{File: dir}})
	}
	return out, nil
}
