package config

import (
	"fmt"
	"maps"
	"slices"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// checkWritten allows, in a project server block, only expressions whose
// value before approval is a faithful copy of what is written: literals,
// strings with interpolations, lists and objects of those, and env() calls
// with literal arguments. An operator, a conditional or a for expression
// could test for env()'s pre-approval value and pick another value once the
// environment is read, so that what the user approved (and its hash) is not
// what runs.
func checkWritten(body hcl.Body) hcl.Diagnostics {
	sb, ok := body.(*hclsyntax.Body)
	if !ok {
		return nil // only native syntax is loaded
	}
	var diags hcl.Diagnostics
	attrs := slices.SortedFunc(maps.Values(sb.Attributes), func(a, b *hclsyntax.Attribute) int {
		return a.SrcRange.Start.Byte - b.SrcRange.Start.Byte
	})
	for _, a := range attrs { // in source order, for diagnostics in a stable order
		diags = append(diags, checkWrittenExpr(a.Expr)...)
	}
	for _, b := range sb.Blocks {
		diags = append(diags, checkWritten(b.Body)...)
	}
	return diags
}

func checkWrittenExpr(e hclsyntax.Expression) hcl.Diagnostics {
	var diags hcl.Diagnostics
	switch e := e.(type) {
	case *hclsyntax.LiteralValueExpr:
	case *hclsyntax.TemplateExpr:
		for _, p := range e.Parts {
			diags = append(diags, checkWrittenExpr(p)...)
		}
	case *hclsyntax.TemplateWrapExpr:
		diags = append(diags, checkWrittenExpr(e.Wrapped)...)
	case *hclsyntax.ParenthesesExpr:
		diags = append(diags, checkWrittenExpr(e.Expression)...)
	case *hclsyntax.TupleConsExpr:
		for _, x := range e.Exprs {
			diags = append(diags, checkWrittenExpr(x)...)
		}
	case *hclsyntax.ObjectConsExpr:
		for _, it := range e.Items {
			if k, ok := it.KeyExpr.(*hclsyntax.ObjectConsKeyExpr); ok {
				if _, bare := hcl.AbsTraversalForExpr(k.Wrapped); !bare.HasErrors() {
					// a bare name as the key: a literal
				} else {
					diags = append(diags, checkWrittenExpr(k.Wrapped)...)
				}
			} else {
				diags = append(diags, checkWrittenExpr(it.KeyExpr)...)
			}
			diags = append(diags, checkWrittenExpr(it.ValueExpr)...)
		}
	case *hclsyntax.FunctionCallExpr:
		if e.Name != "env" || e.ExpandFinal {
			return append(diags, notWritten(e, fmt.Sprintf("a call of %s()", e.Name)))
		}
		for _, a := range e.Args {
			if !isLiteralString(a) {
				return append(diags, notWritten(a, "an env() argument that is not a literal string"))
			}
		}
	default:
		return append(diags, notWritten(e, "an expression"))
	}
	return diags
}

// isLiteralString reports whether e is a string written out in full.
func isLiteralString(e hclsyntax.Expression) bool {
	switch e := e.(type) {
	case *hclsyntax.LiteralValueExpr:
		return true
	case *hclsyntax.TemplateExpr:
		return e.IsStringLiteral()
	}
	return false
}

func notWritten(e hclsyntax.Expression, what string) *hcl.Diagnostic {
	return errorf(e.Range().Ptr(), "Expression not allowed in a project file",
		"A project server's block may use literal values, lists and objects of them, strings with ${…}, and env(\"NAME\") with literal arguments; found %s. What you approve must be exactly what runs, so values cannot be computed.", what)
}
