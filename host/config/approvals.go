package config

import (
	"bytes"
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
// created if needed; only the approved_project_servers attribute changes
// (see setApprovals), every other byte of the file is kept. It is replaced
// atomically, readable by its owner only.
func WriteApprovals(path string, hashes map[string]string) error {
	src, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if _, diags := hclsyntax.ParseConfig(src, path, hcl.InitialPos); diags.HasErrors() {
		return fmt.Errorf("cannot update %s: %s", path, diags.Error())
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
	out, err := setApprovals(src, path, cty.ObjectVal(all))
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return WriteFileAtomic(path, out, 0o600)
}

// approvalsAttr is the settings attribute that holds the approvals.
const approvalsAttr = "approved_project_servers"

// setApprovals returns src (the file filename, valid HCL) with the first
// unlabelled settings block's approved_project_servers set to v, spliced
// into src's bytes: the attribute's expression is replaced where it is, or
// the attribute is inserted on a line of its own before the block's closing
// brace (a settings block written on one line is split), or a settings
// block is appended.
func setApprovals(src []byte, filename string, v cty.Value) ([]byte, error) {
	f, diags := hclsyntax.ParseConfig(src, filename, hcl.InitialPos)
	if diags.HasErrors() {
		return nil, fmt.Errorf("cannot update %s: %s", filename, diags.Error())
	}
	var settings *hclsyntax.Block
	for _, b := range f.Body.(*hclsyntax.Body).Blocks {
		if b.Type == "settings" && len(b.Labels) == 0 {
			settings = b
			break
		}
	}
	eol := eolOf(src)
	attr := hclwrite.NewEmptyFile()
	attr.Body().SetAttributeValue(approvalsAttr, v)
	text := bytes.TrimSuffix(attr.Bytes(), []byte("\n")) // formatted alone

	splice := func(start, end int, with []byte) []byte {
		out := make([]byte, 0, len(src)-(end-start)+len(with))
		return append(append(append(out, src[:start]...), with...), src[end:]...)
	}
	switch {
	case settings == nil:
		block := hclwrite.NewEmptyFile()
		block.Body().AppendNewBlock("settings", nil).Body().SetAttributeValue(approvalsAttr, v)
		return appendBlock(src, block.Bytes()), nil
	case settings.Body.Attributes[approvalsAttr] != nil:
		r := settings.Body.Attributes[approvalsAttr].SrcRange
		return splice(r.Start.Byte, r.End.Byte, reindent(text, lineIndent(src, r.Start.Byte), eol)), nil
	}
	closing := settings.CloseBraceRange.Start.Byte
	if ls := bytes.LastIndexByte(src[:closing], '\n') + 1; isBlank(src[ls:closing]) {
		indent := lineIndent(src, settings.TypeRange.Start.Byte) + "  "
		if first := firstItem(settings.Body); first >= 0 && lineIndent(src, first) != "" {
			indent = lineIndent(src, first)
		}
		line := append(append([]byte(indent), reindent(text, indent, eol)...), eol...)
		return splice(ls, ls, line), nil
	}
	// A settings block on one line (settings {} or settings { a = 1 }):
	// what is between its braces goes on a line of its own, then the
	// attribute, then the closing brace.
	outer := lineIndent(src, settings.TypeRange.Start.Byte)
	indent := outer + "  "
	var with []byte
	with = append(with, eol...)
	if inner := bytes.TrimSpace(src[settings.OpenBraceRange.End.Byte:closing]); len(inner) > 0 {
		with = append(append(append(with, indent...), inner...), eol...)
	}
	with = append(append(with, indent...), reindent(text, indent, eol)...)
	with = append(append(with, eol...), outer...)
	return splice(settings.OpenBraceRange.End.Byte, closing, with), nil
}

// firstItem returns the offset of body's first attribute or block, or -1.
func firstItem(body *hclsyntax.Body) int {
	first := -1
	for _, a := range body.Attributes {
		if first < 0 || a.SrcRange.Start.Byte < first {
			first = a.SrcRange.Start.Byte
		}
	}
	for _, b := range body.Blocks {
		if first < 0 || b.TypeRange.Start.Byte < first {
			first = b.TypeRange.Start.Byte
		}
	}
	return first
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
