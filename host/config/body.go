package config

import (
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/agext/levenshtein"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/gohcl"
)

// decodeBody decodes body into dst, a pointer to a struct with gohcl tags,
// and returns the attributes that were set and decoded without error, as
// written (their ranges and unevaluated expressions, for validation).
//
// It is gohcl.DecodeBody with the diagnostics every block of mcphost's
// configuration gives:
//
//   - an unsupported argument or block type is reported with the nearest
//     allowed name ("Did you mean …?") and the list of what is allowed, in
//     the order dst's fields are declared;
//   - each attribute is evaluated once, in that order. An evaluation error
//     (an unset env(), say) is reported alone, not followed by gohcl's
//     "Unsuitable value type" for the unknown value it leaves, and a value
//     of the wrong type is reported at the whole expression. Either way the
//     attribute is left out, so its field keeps the value it had before.
//
// Nested blocks are decoded the same way, except a ",remain" body: it is
// passed on as written, for a decoder of its own (an auth block's body is
// the plugin's, an oauth block has decodeOAuth).
func decodeBody(body hcl.Body, ctx *hcl.EvalContext, dst any) (hcl.Attributes, hcl.Diagnostics) {
	vb := &valueBody{Body: body, ctx: ctx, typ: reflect.TypeOf(dst).Elem(), decoded: hcl.Attributes{}}
	diags := gohcl.DecodeBody(vb, nil, dst)
	return vb.decoded, diags
}

// valueBody is a body as gohcl sees it in decodeBody: its attributes are
// values, evaluated and type-checked (against the field of typ they go to)
// already.
type valueBody struct {
	hcl.Body
	ctx *hcl.EvalContext
	typ reflect.Type // the struct the body is decoded into
	// decoded collects the attributes (as written) that were decoded.
	decoded hcl.Attributes
}

func (b *valueBody) Content(*hcl.BodySchema) (*hcl.BodyContent, hcl.Diagnostics) {
	schema := schemaOf(b.typ)
	c, diags := b.Body.Content(schema)
	c, d := b.evaluate(c, schema)
	return c, append(explainUnsupported(diags, schema), d...)
}

func (b *valueBody) PartialContent(*hcl.BodySchema) (*hcl.BodyContent, hcl.Body, hcl.Diagnostics) {
	schema := schemaOf(b.typ)
	c, remain, diags := b.Body.PartialContent(schema)
	c, d := b.evaluate(c, schema)
	return c, remain, append(diags, d...)
}

// evaluate returns c with every attribute replaced by its value (or left
// out, with the diagnostics) and every nested block's body a valueBody of
// its own.
func (b *valueBody) evaluate(c *hcl.BodyContent, schema *hcl.BodySchema) (*hcl.BodyContent, hcl.Diagnostics) {
	if c == nil {
		return nil, nil
	}
	out := &hcl.BodyContent{Attributes: hcl.Attributes{}, MissingItemRange: c.MissingItemRange}
	var diags hcl.Diagnostics
	for _, as := range schema.Attributes {
		a := c.Attributes[as.Name]
		if a == nil {
			continue
		}
		field := fieldFor(b.typ, as.Name, "attr", "optional")
		if field.Type == exprType || field.Type == attrType {
			out.Attributes[a.Name] = a // gohcl hands these over unevaluated
			b.record(a)
			continue
		}
		v, d := a.Expr.Value(b.ctx)
		if !d.HasErrors() {
			d = append(d, gohcl.DecodeExpression(hcl.StaticExpr(v, a.Expr.Range()), nil, reflect.New(field.Type).Interface())...)
		}
		diags = append(diags, d...)
		if d.HasErrors() {
			continue
		}
		static := *a
		static.Expr = hcl.StaticExpr(v, a.Expr.Range())
		out.Attributes[a.Name] = &static
		b.record(a)
	}
	for _, blk := range c.Blocks {
		field := fieldFor(b.typ, blk.Type, "block")
		nested := *blk
		nested.Body = &valueBody{Body: blk.Body, ctx: b.ctx, typ: structType(field.Type)}
		out.Blocks = append(out.Blocks, &nested)
	}
	return out, diags
}

func (b *valueBody) record(a *hcl.Attribute) {
	if b.decoded != nil {
		b.decoded[a.Name] = a
	}
}

var (
	exprType = reflect.TypeFor[hcl.Expression]()
	attrType = reflect.TypeFor[*hcl.Attribute]()
)

// fieldFor returns the field of struct type t whose hcl tag names name
// with one of kinds ("attr" for a tag without a kind). The schema of t
// has only such names.
func fieldFor(t reflect.Type, name string, kinds ...string) reflect.StructField {
	for i := range t.NumField() {
		f := t.Field(i)
		tag, ok := f.Tag.Lookup("hcl")
		if !ok {
			continue
		}
		n, kind, _ := strings.Cut(tag, ",")
		if kind == "" {
			kind = "attr"
		}
		if n == name && slices.Contains(kinds, kind) {
			return f
		}
	}
	panic(fmt.Sprintf("config: %s has no field tagged %q", t, name))
}

// structType is the struct a block field holds: T of T, *T, []T or []*T.
func structType(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Slice || t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// schemas caches schemaOf: reflect.Type to *hcl.BodySchema.
var schemas sync.Map

// schemaOf is gohcl.ImpliedBodySchema of struct type t with its attributes
// and blocks in the order t declares them (gohcl sorts them by name): the
// order diagnostics list what is allowed in.
func schemaOf(t reflect.Type) *hcl.BodySchema {
	if s, ok := schemas.Load(t); ok {
		return s.(*hcl.BodySchema)
	}
	s, _ := gohcl.ImpliedBodySchema(reflect.New(t).Interface())
	order := func(name string, kinds ...string) int {
		return fieldFor(t, name, kinds...).Index[0]
	}
	slices.SortStableFunc(s.Attributes, func(a, b hcl.AttributeSchema) int {
		return order(a.Name, "attr", "optional") - order(b.Name, "attr", "optional")
	})
	slices.SortStableFunc(s.Blocks, func(a, b hcl.BlockHeaderSchema) int {
		return order(a.Type, "block") - order(b.Type, "block")
	})
	schemas.Store(t, s)
	return s
}

// decodeExpr evaluates an expression and decodes its value into dst. An
// evaluation error is reported alone, without a second "unknown value"
// diagnostic from the conversion.
func decodeExpr(expr hcl.Expression, ctx *hcl.EvalContext, dst any) hcl.Diagnostics {
	v, diags := expr.Value(ctx)
	if diags.HasErrors() {
		return diags
	}
	return append(diags, gohcl.DecodeExpression(hcl.StaticExpr(v, expr.Range()), nil, dst)...)
}

var unsupportedRE = regexp.MustCompile(`(?:argument|Blocks of type) (?:named )?"([^"]+)"`)

// explainUnsupported adds a suggestion and the list of what is allowed to
// HCL's "Unsupported argument/block type" diagnostics.
func explainUnsupported(diags hcl.Diagnostics, schema *hcl.BodySchema) hcl.Diagnostics {
	for _, d := range diags {
		var allowed []string
		switch d.Summary {
		case "Unsupported argument":
			for _, a := range schema.Attributes {
				allowed = append(allowed, a.Name)
			}
		case "Unsupported block type":
			for _, b := range schema.Blocks {
				allowed = append(allowed, b.Type)
			}
		default:
			continue
		}
		m := unsupportedRE.FindStringSubmatch(d.Detail)
		if m != nil && !strings.Contains(d.Detail, "Did you mean") {
			if s := suggest(m[1], allowed); s != "" {
				d.Detail += fmt.Sprintf(" Did you mean %q?", s)
			}
		}
		if len(allowed) == 0 {
			d.Detail += " Nothing is allowed here."
		} else {
			d.Detail += " Allowed here: " + strings.Join(allowed, ", ") + "."
		}
	}
	return diags
}

// suggest returns the allowed name closest to given, if it is close enough.
func suggest(given string, allowed []string) string {
	best, bestDist := "", 3
	for _, a := range allowed {
		if d := levenshtein.Distance(given, a, nil); d < bestDist {
			best, bestDist = a, d
		}
	}
	return best
}
