package config

import (
	"sort"

	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/zclconf/go-cty/cty"
)

// setMapWithSecrets writes the map attribute name: m's values as setMap
// does, and secrets' as secret() or env() calls (a secret's key wins).
func (w valueWriter) setMapWithSecrets(b *hclwrite.Body, name string, m map[string]string, secrets map[string]SecretRef) {
	if len(secrets) == 0 {
		w.setMap(b, name, m)
		return
	}
	keys := make([]string, 0, len(m)+len(secrets))
	for k := range m {
		if _, secret := secrets[k]; !secret {
			keys = append(keys, k)
		}
	}
	for k := range secrets {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	attrs := make([]hclwrite.ObjectAttrTokens, len(keys))
	for i, k := range keys {
		key := hclwrite.TokensForIdentifier(k)
		if !hclsyntax.ValidIdentifier(k) {
			key = hclwrite.TokensForValue(cty.StringVal(k))
		}
		var v hclwrite.Tokens
		if r, secret := secrets[k]; secret {
			v = r.tokens()
		} else {
			v = w.tokens(m[k])
		}
		attrs[i] = hclwrite.ObjectAttrTokens{Name: key, Value: v}
	}
	b.SetAttributeRaw(name, hclwrite.TokensForObject(attrs))
}
