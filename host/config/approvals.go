package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/gohcl"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/zclconf/go-cty/cty"
)

// WriteApprovals records approval hashes (server name to ApprovalHash) in
// the settings block of the file at path, a local scope file (`mcphost
// config approve`), merged with the approvals already there. The file is
// created if needed; its other content, comments and layout are kept. It
// is replaced atomically, readable by its owner only.
func WriteApprovals(path string, hashes map[string]string) error {
	src, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	f, diags := hclwrite.ParseConfig(src, path, hcl.InitialPos)
	if diags.HasErrors() {
		return fmt.Errorf("cannot update %s: %s", path, diags.Error())
	}
	body := f.Body()
	settings := body.FirstMatchingBlock("settings", nil)
	if settings == nil {
		if len(body.Attributes())+len(body.Blocks()) > 0 {
			body.AppendNewline()
		}
		settings = body.AppendNewBlock("settings", nil)
	}
	cur, err := ReadApprovals(path, src)
	if err != nil {
		return err
	}
	all := map[string]cty.Value{}
	for k, v := range cur {
		all[k] = cty.StringVal(v)
	}
	for k, v := range hashes {
		all[k] = cty.StringVal(v)
	}
	settings.Body().SetAttributeValue("approved_project_servers", cty.ObjectVal(all))
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return WriteFileAtomic(path, f.Bytes(), 0o600)
}

// ReadApprovals returns the approvals (settings { approved_project_servers
// }) of a file's source, src, as written at path: the first settings
// block's, the one WriteApprovals writes. nil if it sets none. Only that
// attribute is read, and it must be a literal object of strings.
func ReadApprovals(path string, src []byte) (map[string]string, error) {
	f, diags := hclsyntax.ParseConfig(src, path, hcl.InitialPos)
	if diags.HasErrors() {
		return nil, fmt.Errorf("cannot read the approvals in %s: %s", path, diags.Error())
	}
	for _, b := range f.Body.(*hclsyntax.Body).Blocks {
		if b.Type != "settings" || len(b.Labels) > 0 {
			continue
		}
		a := b.Body.Attributes["approved_project_servers"]
		if a == nil {
			return nil, nil
		}
		var m map[string]string
		if diags := gohcl.DecodeExpression(a.Expr, nil, &m); diags.HasErrors() {
			return nil, fmt.Errorf("cannot read the approvals in %s: %s", path, diags.Error())
		}
		return m, nil
	}
	return nil, nil
}
