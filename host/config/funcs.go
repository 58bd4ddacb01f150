package config

import (
	"fmt"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
)

// LookupEnvFunc looks up an environment variable; it has the signature of os.LookupEnv.
// The loader never reads the process environment directly, so tests can inject one.
type LookupEnvFunc func(name string) (string, bool)

// evalContext builds the HCL evaluation context shared by every file but
// the project's: the env() and secret() functions. It is the one place where
// configuration functions are defined.
//
//	env("NAME")            the value of NAME; an error if NAME is unset
//	env("NAME", "default") the value of NAME, or "default" if NAME is unset
//	secret("NAME")         the secret NAME from secretsDir (see WriteSecret)
func evalContext(lookup LookupEnvFunc, secretsDir string) *hcl.EvalContext {
	return &hcl.EvalContext{
		Functions: map[string]function.Function{
			"env":    envFunc(lookup),
			"secret": secretFunc(secretsDir),
		},
	}
}

// writtenContext is the evaluation context for configuration that must not read
// the environment yet: a project server's block before the user approved it.
// env() returns the call as written (`${env("NAME")}`), so what the user
// approves, and the approval hash, cover where a value comes from, never a
// secret's value; a rotated secret needs no new approval.
func writtenContext() *hcl.EvalContext {
	return &hcl.EvalContext{
		Functions: map[string]function.Function{

			"env": function.New(&function.Spec{
				Params:   []function.Parameter{{Name: "name", Type: cty.String}},
				VarParam: &function.Parameter{Name: "default", Type: cty.String},
				Type:     function.StaticReturnType(cty.String),
				Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
					if len(args) > 2 {
						return cty.NilVal, function.NewArgErrorf(2, "env takes a name and at most one default, got %d arguments", len(args))
					}
					if len(args) == 2 {
						return cty.StringVal(fmt.Sprintf("${env(%q, %q)}", args[0].AsString(), args[1].AsString())), nil
					}
					return cty.StringVal(fmt.Sprintf("${env(%q)}", args[0].AsString())), nil
				},
			}),
		},
	}
}

// displayContext is writtenContext for every scope (LoadOptions.AsWritten):
// secret() also shows the call (`${secret("NAME")}`) and reads nothing.
func displayContext() *hcl.EvalContext {
	ctx := writtenContext()
	ctx.Functions["secret"] = function.New(&function.Spec{
		Params: []function.Parameter{{Name: "name", Type: cty.String}},
		Type:   function.StaticReturnType(cty.String),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			return cty.StringVal(fmt.Sprintf("${secret(%q)}", args[0].AsString())), nil
		},
	})
	return ctx
}

// FromEnv reports whether a value decoded before approval contains an env()
// call (it shows the call, not the variable's value).
func FromEnv(v string) bool { return strings.Contains(v, "${env(\"") }

func envFunc(lookup LookupEnvFunc) function.Function {
	return function.New(&function.Spec{
		Description: "Returns the value of an environment variable, or the default if it is unset.",
		Params: []function.Parameter{
			{Name: "name", Type: cty.String},
		},
		VarParam: &function.Parameter{Name: "default", Type: cty.String},
		Type:     function.StaticReturnType(cty.String),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			if len(args) > 2 {
				return cty.NilVal, function.NewArgErrorf(2, "env takes a name and at most one default, got %d arguments", len(args))
			}
			name := args[0].AsString()
			if name == "" {
				return cty.NilVal, function.NewArgErrorf(0, "the variable name must not be empty")
			}
			if v, ok := lookup(name); ok {
				return cty.StringVal(v), nil
			}
			if len(args) == 2 {
				return args[1], nil
			}
			return cty.NilVal, function.NewArgErrorf(0, "environment variable %s is not set; set it, or give a default: env(%q, \"default\")", name, name)
		},
	})
}

// errorf is a small helper for a diagnostic with a source range.
func errorf(subject *hcl.Range, summary, detailFormat string, args ...any) *hcl.Diagnostic {
	return &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  summary,
		Detail:   fmt.Sprintf(detailFormat, args...),
		Subject:  subject,
	}
}

func warnf(subject *hcl.Range, summary, detailFormat string, args ...any) *hcl.Diagnostic {
	d := errorf(subject, summary, detailFormat, args...)
	d.Severity = hcl.DiagWarning
	return d
}
