package config

import (
	"regexp"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/zclconf/go-cty/cty"
)

// valueWriter writes the string values of a new server block: as literals,
// or, with expand, with ${NAME} and ${NAME:-default} written as env() calls.
type valueWriter struct{ expand bool }

// varRE matches ${NAME} and ${NAME:-default} (the default without '}').
var varRE = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}`)

// tokens writes s as an expression.
func (w valueWriter) tokens(s string) hclwrite.Tokens {
	if !w.expand {
		return hclwrite.TokensForValue(cty.StringVal(s))
	}
	locs := varRE.FindAllStringSubmatchIndex(s, -1)
	if len(locs) == 0 {
		return hclwrite.TokensForValue(cty.StringVal(s))
	}
	call := func(loc []int) hclwrite.Tokens {
		args := []hclwrite.Tokens{hclwrite.TokensForValue(cty.StringVal(s[loc[2]:loc[3]]))}
		if loc[4] >= 0 {
			args = append(args, hclwrite.TokensForValue(cty.StringVal(s[loc[4]:loc[5]])))
		}
		return hclwrite.TokensForFunctionCall("env", args...)
	}
	if len(locs) == 1 && locs[0][0] == 0 && locs[0][1] == len(s) {
		return call(locs[0]) // the whole value: env("NAME")
	}
	// A template: the text between the variables escaped as a quoted
	// string's content, each variable an interpolation of env().
	toks := hclwrite.Tokens{{Type: hclsyntax.TokenOQuote, Bytes: []byte(`"`)}}
	lit := func(text string, beforeInterp bool) {
		dollar := beforeInterp && strings.HasSuffix(text, "$")
		if dollar {
			// "$${" would read as an escaped "${": the "$" goes in an
			// interpolation of its own.
			text = text[:len(text)-1]
		}
		if text != "" {
			q := hclwrite.TokensForValue(cty.StringVal(text)) // "…", escaped
			toks = append(toks, q[1:len(q)-1]...)
		}
		if dollar {
			toks = append(toks, &hclwrite.Token{Type: hclsyntax.TokenTemplateInterp, Bytes: []byte("${")})
			toks = append(toks, hclwrite.TokensForValue(cty.StringVal("$"))...)
			toks = append(toks, &hclwrite.Token{Type: hclsyntax.TokenTemplateSeqEnd, Bytes: []byte("}")})
		}
	}
	at := 0
	for _, loc := range locs {
		lit(s[at:loc[0]], true)
		toks = append(toks, &hclwrite.Token{Type: hclsyntax.TokenTemplateInterp, Bytes: []byte("${")})
		toks = append(toks, call(loc)...)
		toks = append(toks, &hclwrite.Token{Type: hclsyntax.TokenTemplateSeqEnd, Bytes: []byte("}")})
		at = loc[1]
	}
	lit(s[at:], false)
	return append(toks, &hclwrite.Token{Type: hclsyntax.TokenCQuote, Bytes: []byte(`"`)})
}

func (w valueWriter) setString(b *hclwrite.Body, name, v string) {
	if v != "" {
		b.SetAttributeRaw(name, w.tokens(v))
	}
}

func (w valueWriter) setList(b *hclwrite.Body, name string, v []string) {
	if len(v) == 0 {
		return
	}
	elems := make([]hclwrite.Tokens, len(v))
	for i, s := range v {
		elems[i] = w.tokens(s)
	}
	b.SetAttributeRaw(name, hclwrite.TokensForTuple(elems))
}

// setMap writes m, with the values of secrets (which take precedence) as
// their calls.
func (w valueWriter) setMap(b *hclwrite.Body, name string, m map[string]string, secrets map[string]SecretRef) {
	if len(m)+len(secrets) == 0 {
		return
	}
	keys := make([]string, 0, len(m)+len(secrets))
	for k := range m {
		keys = append(keys, k)
	}
	for k := range secrets {
		if _, dup := m[k]; !dup {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	attrs := make([]hclwrite.ObjectAttrTokens, len(keys))
	for i, k := range keys {
		name := hclwrite.TokensForIdentifier(k)
		if !hclsyntax.ValidIdentifier(k) {
			name = hclwrite.TokensForValue(cty.StringVal(k))
		}
		value := w.tokens(m[k])
		if r, ok := secrets[k]; ok {
			value = r.tokens()
		}
		attrs[i] = hclwrite.ObjectAttrTokens{Name: name, Value: value}
	}
	b.SetAttributeRaw(name, hclwrite.TokensForObject(attrs))
}
