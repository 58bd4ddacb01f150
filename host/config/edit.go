package config

import (
	"errors"
	"fmt"
	"slices"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/zclconf/go-cty/cty"
)

// Editing configuration files (`mcphost server add|remove`, `mcphost
// import`): a server block is added (formatted alone by hclwrite) or removed
// by splicing the file's bytes (splice.go), which keeps every other byte of
// the file (comments, layout, line ends, other blocks) as it was.

// Errors of AddServerBlock and RemoveServerBlock, for errors.Is.
var (
	ErrServerExists   = errors.New("a server of that name is already in the file")
	ErrServerNotFound = errors.New("no server of that name in the file")
)

// SecretRef is where a secret value of a new server block comes from:
// exactly one of Value (written as is: in clear text), Env (written as
// env("NAME")) and Stored (written as secret("NAME"), see WriteSecret).
type SecretRef struct {
	Value  string
	Env    string
	Stored string
}

// IsZero reports whether r names no value.
func (r SecretRef) IsZero() bool { return r == SecretRef{} }

// tokens writes r as an expression.
func (r SecretRef) tokens() hclwrite.Tokens {
	switch {
	case r.Env != "":
		return hclwrite.TokensForFunctionCall("env", hclwrite.TokensForValue(cty.StringVal(r.Env)))
	case r.Stored != "":
		return hclwrite.TokensForFunctionCall("secret", hclwrite.TokensForValue(cty.StringVal(r.Stored)))
	}
	return hclwrite.TokensForValue(cty.StringVal(r.Value))
}

// ServerEntry is a server block to add to a configuration file. Its values
// are written as literals (a "${" in one stays text), except the secrets.
type ServerEntry struct {
	Name      string
	Transport string // "" writes no transport attribute (stdio)

	Command string
	Args    []string
	Env     map[string]string
	Cwd     string
	// InheritEnv are host variables the server also inherits (inherit_env).
	InheritEnv []string
	// EnvFile is a dotenv file whose variables the server gets (env_file;
	// WP-D makes the loader read it).
	EnvFile string

	URL           string
	Headers       map[string]string
	HeadersHelper []string

	// OAuth, if set, is written as an oauth { } block.
	OAuth *OAuthEntry
	// XAA, if set, is written as an auth "xaa" { } block.
	XAA *XAAEntry

	// SecretEnv and SecretHeaders are variables and headers whose values
	// are secrets, written into env and headers as secret("NAME") or
	// env("NAME") (never as literals); a key in both a secret map and Env
	// or Headers is written from the secret map.
	SecretEnv, SecretHeaders map[string]SecretRef

	// Registry, if set, is written as registry = "NAME@VERSION": the MCP
	// Registry entry the server was installed from (WP-C: such a server
	// needs approval, like a project server).
	Registry string

	// Expand writes ${NAME} and ${NAME:-default} in the values of command,
	// args, env, cwd, url, headers, headers_helper and the oauth block's
	// client_id and scopes as env("NAME") and
	// env("NAME", "default") calls (what the mcpServers JSON of other hosts
	// means by them); without it they stay text.
	Expand bool
}

// OAuthEntry is the oauth block of a ServerEntry.
type OAuthEntry struct {
	ClientID     string
	ClientSecret SecretRef
	CallbackPort int
	Scopes       []string
}

// XAAEntry is the auth "xaa" block of a ServerEntry.
type XAAEntry struct {
	IdP          string
	ClientID     string
	ClientSecret SecretRef
}

// AddServerBlock returns src (the file filename) with a server block for e
// appended. It fails with ErrServerExists when the file already declares
// the server, and when src is not valid HCL. Only the new block is
// formatted: the bytes of src stay as they are (see appendBlock).
func AddServerBlock(src []byte, filename string, e *ServerEntry) ([]byte, error) {
	body, err := parseForEdit(src, filename)
	if err != nil {
		return nil, err
	}
	if findServerBlock(body, e.Name) != nil {
		return nil, fmt.Errorf("server %q in %s: %w", e.Name, filename, ErrServerExists)
	}
	return appendBlock(src, renderServerBlock(e)), nil
}

// renderServerBlock returns the server block for e, formatted on its own,
// its lines ending in LF.
func renderServerBlock(e *ServerEntry) []byte {
	f := hclwrite.NewEmptyFile()
	b := f.Body().AppendNewBlock("server", []string{e.Name}).Body()
	if e.Transport != "" {
		b.SetAttributeValue("transport", cty.StringVal(e.Transport))
	}
	w := valueWriter{expand: e.Expand}
	w.setString(b, "command", e.Command)
	w.setList(b, "args", e.Args)
	w.setMapWithSecrets(b, "env", e.Env, e.SecretEnv)
	w.setList(b, "inherit_env", e.InheritEnv)
	w.setString(b, "env_file", e.EnvFile)
	w.setString(b, "cwd", e.Cwd)
	w.setString(b, "url", e.URL)
	w.setMapWithSecrets(b, "headers", e.Headers, e.SecretHeaders)
	switch len(e.HeadersHelper) {
	case 0:
	case 1:
		w.setString(b, "headers_helper", e.HeadersHelper[0])
	default:
		w.setList(b, "headers_helper", e.HeadersHelper)
	}
	if o := e.OAuth; o != nil {
		ob := b.AppendNewBlock("oauth", nil).Body()
		w.setString(ob, "client_id", o.ClientID)
		if !o.ClientSecret.IsZero() {
			ob.SetAttributeRaw("client_secret", o.ClientSecret.tokens())
		}
		if o.CallbackPort != 0 {
			ob.SetAttributeValue("callback_port", cty.NumberIntVal(int64(o.CallbackPort)))
		}
		w.setList(ob, "scopes", o.Scopes)
	}
	if e.Registry != "" {
		b.SetAttributeValue("registry", cty.StringVal(e.Registry))
	}
	if x := e.XAA; x != nil {
		ab := b.AppendNewBlock("auth", []string{"xaa"}).Body()
		w.setString(ab, "idp", x.IdP)
		w.setString(ab, "client_id", x.ClientID)
		if !x.ClientSecret.IsZero() {
			ab.SetAttributeRaw("client_secret", x.ClientSecret.tokens())
		}
	}
	out := f.Bytes()
	if len(out) > 0 && out[len(out)-1] != '\n' {
		out = append(out, '\n')
	}
	return out
}

// RemoveServerBlock returns src without the server block name (and the
// comment lines just above it, its line comment and its line end: see
// itemSpan), its bytes cut out of src so that every other byte stays as it
// is, but for a blank line the cut would leave doubled (see cutItem).
// stored lists the secrets the block read with secret("NAME"), so that the
// caller can delete those it wrote.
func RemoveServerBlock(src []byte, filename, name string) (out []byte, stored []string, err error) {
	body, err := parseForEdit(src, filename)
	if err != nil {
		return nil, nil, err
	}
	block := findServerBlock(body, name)
	if block == nil {
		return nil, nil, fmt.Errorf("server %q in %s: %w", name, filename, ErrServerNotFound)
	}
	stored = secretCalls(block.Body)
	toks, diags := hclsyntax.LexConfig(src, filename, hcl.InitialPos)
	if diags.HasErrors() {
		return nil, nil, fmt.Errorf("cannot edit %s: %w", filename, diags)
	}
	start, end := itemSpan(toks, block.Range())
	return cutItem(src[:start:start], src[end:], eolOf(src)), stored, nil
}

// HasServerBlock reports whether src declares the server name.
func HasServerBlock(src []byte, filename, name string) (bool, error) {
	body, err := parseForEdit(src, filename)
	if err != nil {
		return false, err
	}
	return findServerBlock(body, name) != nil, nil
}

// parseForEdit parses src, the file filename, for an edit.
func parseForEdit(src []byte, filename string) (*hclsyntax.Body, error) {
	f, diags := hclsyntax.ParseConfig(src, filename, hcl.InitialPos)
	if diags.HasErrors() {
		return nil, fmt.Errorf("cannot edit %s: %w", filename, diags)
	}
	return f.Body.(*hclsyntax.Body), nil
}

// findServerBlock returns the first top-level server block name of body.
func findServerBlock(body *hclsyntax.Body, name string) *hclsyntax.Block {
	for _, b := range body.Blocks {
		if b.Type == "server" && slices.Equal(b.Labels, []string{name}) {
			return b
		}
	}
	return nil
}

// SecretCalls lists the literal arguments of every secret() call in src (a
// file that does not parse has none that could be evaluated).
func SecretCalls(src []byte, filename string) []string {
	f, diags := hclsyntax.ParseConfig(src, filename, hcl.InitialPos)
	if diags.HasErrors() {
		return nil
	}
	return secretCalls(f.Body.(*hclsyntax.Body))
}

func secretCalls(body *hclsyntax.Body) []string {
	var out []string
	hclsyntax.VisitAll(body, func(n hclsyntax.Node) hcl.Diagnostics {
		call, ok := n.(*hclsyntax.FunctionCallExpr)
		if !ok || call.Name != "secret" || len(call.Args) != 1 {
			return nil
		}
		if v, d := call.Args[0].Value(nil); !d.HasErrors() && v.Type() == cty.String && v.IsKnown() && !v.IsNull() {
			out = append(out, v.AsString())
		}
		return nil
	})
	return out
}
