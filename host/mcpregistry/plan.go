package mcpregistry

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Installing a server: Choose picks a package or a remote of a server.json,
// and PlanPackage or PlanRemote turns it into what a server block runs or
// reaches, asking a Resolver for the inputs the publisher left to the user.

// Input kinds (Need.Kind).
const (
	KindEnv      = "environment variable"
	KindHeader   = "header"
	KindVariable = "variable"
	KindArgument = "argument"
)

// Need is an input the user gives: an environment variable, a header, a
// {variable} of a value or URL, or an argument.
type Need struct {
	// Key names the input on the command line (-e KEY=VALUE, -H "KEY:
	// VALUE"): the variable's or header's name, the {variable}'s name, a
	// named argument's flag without its dashes, a positional one's
	// valueHint.
	Key  string
	Kind string
	// In is what the input is part of, for a prompt or an error (`header
	// "Authorization"`); empty for a top-level input.
	In    string
	Input Input
}

// Answer is the user's value for a Need: Value, or (Env set) the
// environment variable Env at run time (env("Env") in the file).
type Answer struct {
	Value string
	Env   string
}

// Resolver returns the user's value for need; ok false when the user gives
// none (then the input's default is used, else a required input is a
// *MissingInputError and an optional one is left out).
type Resolver func(need Need) (a Answer, ok bool, err error)

// MissingInputError is a required input without a value.
type MissingInputError struct{ Need Need }

func (e *MissingInputError) Error() string {
	s := fmt.Sprintf("the %s %s is required", e.Need.Kind, Printable(e.Need.Key, 100))
	if e.Need.In != "" {
		s += " (in " + Printable(e.Need.In, 100) + ")"
	}
	if d := Printable(e.Need.Input.Description, 120); d != "" {
		s += ": " + d
	}
	return s
}

// ErrComposedEnv is returned (wrapped) for a value that would join text
// and an env() reference: mcphost writes a variable's value whole.
var ErrComposedEnv = errors.New("a value composed of text and a variable taken from the environment")

// Value is a string of a Plan: Text, or (FromEnv set) the environment
// variable FromEnv at run time. Secret marks a value that holds a secret
// input (not to be written in clear text, nor printed).
type Value struct {
	Text    string
	FromEnv string
	Secret  bool
}

// Plan is what a server block of a registry server holds.
type Plan struct {
	// Registry is "NAME@VERSION", the server's registry entry.
	Registry string
	// Origin describes the package or remote chosen ("npm package
	// @scope/pkg@1.2.0", "streamable-http remote https://…").
	Origin string
	// Transport is stdio, streamable-http or sse.
	Transport string

	Command string
	Args    []Value
	Env     map[string]Value

	URL     Value
	Headers map[string]Value
}

// Choice selects a package or a remote of a server: Package or Remote
// (1-based; at most one of them), or the first of Transport ("stdio": the
// first package; "streamable-http", "http" or "sse": the first remote of
// that type). With none set, the first package is chosen if there is one,
// else the first remote: a package runs the exact version installed (its
// approval covers what runs), where a remote can change behind its URL.
type Choice struct {
	Package, Remote int
	Transport       string
}

// Choose returns the package or the remote c selects (one of them nil).
func Choose(s *ServerJSON, c Choice) (*Package, *Transport, error) {
	switch {
	case c.Package != 0 && c.Remote != 0:
		return nil, nil, errors.New("choose a package or a remote, not both")
	case c.Package != 0:
		if c.Package < 1 || c.Package > len(s.Packages) {
			return nil, nil, fmt.Errorf("%s has %d package(s): no package %d", s.Name, len(s.Packages), c.Package)
		}
		return &s.Packages[c.Package-1], nil, nil
	case c.Remote != 0:
		if c.Remote < 1 || c.Remote > len(s.Remotes) {
			return nil, nil, fmt.Errorf("%s has %d remote(s): no remote %d", s.Name, len(s.Remotes), c.Remote)
		}
		return nil, &s.Remotes[c.Remote-1], nil
	case c.Transport == TransportStdio:
		if len(s.Packages) == 0 {
			return nil, nil, fmt.Errorf("%s has no package to run locally (stdio); it has %d remote(s)", s.Name, len(s.Remotes))
		}
		return &s.Packages[0], nil, nil
	case c.Transport != "":
		want := c.Transport
		if want == "http" {
			want = TransportStreamableHTTP
		}
		for i := range s.Remotes {
			if s.Remotes[i].Type == want {
				return nil, &s.Remotes[i], nil
			}
		}
		return nil, nil, fmt.Errorf("%s has no %s remote", s.Name, c.Transport)
	case len(s.Packages) > 0:
		return &s.Packages[0], nil, nil
	case len(s.Remotes) > 0:
		return nil, &s.Remotes[0], nil
	}
	return nil, nil, fmt.Errorf("%s declares no package and no remote: nothing to install", s.Name)
}

// PlanPackage returns the stdio command that runs package p of server s:
// npx -y ID@VERSION (npm), uvx ID==VERSION (PyPI), docker run -i --rm
// [-e NAME…] IMAGE (OCI), dnx ID@VERSION --yes (NuGet). A runtimeHint
// picks another runner of the package's type, among Runners only;
// runtimeArguments go before the package and packageArguments after it.
// A package without a version (or "latest") is refused: what runs must be
// what was approved.
func PlanPackage(s *ServerJSON, p *Package, resolve Resolver) (*Plan, error) {
	if t := p.Transport.Type; t != "" && t != TransportStdio {
		return nil, &UnsupportedError{What: fmt.Sprintf("a %s package that serves %s itself", Printable(p.RegistryType, 40), Printable(t, 40)), Hint: "choose a remote (--remote N) or another package"}
	}
	r := resolver{resolve: resolve}
	plan := &Plan{Registry: s.Name + "@" + s.Version, Transport: TransportStdio, Env: map[string]Value{}}
	id := p.Identifier
	runners := Runners(p.RegistryType)
	if len(runners) == 0 {
		return nil, &UnsupportedError{What: fmt.Sprintf("the package type %q", Printable(p.RegistryType, 40)), Hint: "choose a remote (--remote N) or another package (--package N)"}
	}
	program := runners[0]
	if p.RuntimeHint != "" {
		if !slices.Contains(runners, p.RuntimeHint) {
			return nil, &UnsupportedError{What: fmt.Sprintf("a %s package run by %q", p.RegistryType, Printable(p.RuntimeHint, 40)),
				Hint: fmt.Sprintf("mcphost runs %s packages with %s only; choose another package (--package N) or a remote (--remote N)", p.RegistryType, strings.Join(runners, ", "))}
		}
		program = p.RuntimeHint
	}
	if err := checkPinned(p); err != nil {
		return nil, err
	}
	var before, after []string // around the runtime arguments
	switch p.RegistryType {
	case RegistryNPM:
		switch program {
		case "pnpm", "yarn":
			before = []string{"dlx"}
		}
		after = []string{id + versionSuffix("@", p.Version)}
	case RegistryPyPI:
		after = []string{id + versionSuffix("==", p.Version)}
	case RegistryOCI:
		before = []string{"run", "-i", "--rm"}
		if p.Version != "" && !hasTagOrDigest(id) {
			id += ":" + p.Version
		}
	case RegistryNuGet:
		after = []string{id + versionSuffix("@", p.Version), "--yes"}
	}
	plan.Command = program
	plan.Origin = fmt.Sprintf("%s package %s", p.RegistryType, Printable(p.Identifier+versionSuffix("@", p.Version), 200))
	for _, a := range before {
		plan.Args = append(plan.Args, Value{Text: a})
	}
	rt, err := r.args(p.RuntimeArguments, "runtime argument")
	if err != nil {
		return nil, err
	}
	if program == "npx" && !slices.ContainsFunc(rt, func(v Value) bool { return v.Text == "-y" || v.Text == "--yes" }) {
		plan.Args = append(plan.Args, Value{Text: "-y"}) // never wait for a "Need to install" prompt
	}
	plan.Args = append(plan.Args, rt...)
	envNames := make([]string, 0, len(p.EnvironmentVariables))
	for _, ev := range p.EnvironmentVariables {
		v, ok, err := r.value(Need{Key: ev.Name, Kind: KindEnv, Input: ev.Input})
		if err != nil {
			return nil, err
		}
		if ok {
			plan.Env[ev.Name] = v
			envNames = append(envNames, ev.Name)
		}
	}
	if p.RegistryType == RegistryOCI {
		// The container sees only the variables passed to it.
		for _, n := range envNames {
			plan.Args = append(plan.Args, Value{Text: "-e"}, Value{Text: n})
		}
		plan.Args = append(plan.Args, Value{Text: id})
	}
	for _, a := range after {
		plan.Args = append(plan.Args, Value{Text: a})
	}
	pa, err := r.args(p.PackageArguments, "package argument")
	if err != nil {
		return nil, err
	}
	if p.RegistryType == RegistryNuGet && len(pa) > 0 {
		plan.Args = append(plan.Args, Value{Text: "--"})
	}
	plan.Args = append(plan.Args, pa...)
	if len(plan.Env) == 0 {
		plan.Env = nil
	}
	return plan, nil
}

// PlanRemote returns the URL and headers of remote t of server s.
func PlanRemote(s *ServerJSON, t *Transport, resolve Resolver) (*Plan, error) {
	if t.Type != TransportStreamableHTTP && t.Type != TransportSSE {
		return nil, &UnsupportedError{What: fmt.Sprintf("a remote of transport %q", t.Type), Hint: "choose another remote or a package"}
	}
	r := resolver{resolve: resolve}
	plan := &Plan{Registry: s.Name + "@" + s.Version, Transport: t.Type}
	u, ok, err := r.value(Need{Key: "url", Kind: KindVariable, Input: Input{Value: t.URL, Variables: t.Variables, IsRequired: true}})
	if err != nil {
		return nil, err
	}
	if !ok || u.Text == "" && u.FromEnv == "" {
		return nil, fmt.Errorf("%s: the remote has no URL", s.Name)
	}
	plan.URL = u
	plan.Origin = fmt.Sprintf("%s remote %s", t.Type, Printable(t.URL, 200))
	for _, h := range t.Headers {
		v, ok, err := r.value(Need{Key: h.Name, Kind: KindHeader, Input: h.Input})
		if err != nil {
			return nil, err
		}
		if ok {
			if plan.Headers == nil {
				plan.Headers = map[string]Value{}
			}
			plan.Headers[h.Name] = v
		}
	}
	return plan, nil
}

// Runners returns the programs that run a package of each registry type, the
// default first: the runtimeHint of a package may name another of its
// type, nothing else (a registry's answer does not choose any program).
// Each gets the package in the form it takes: npx -y ID@VERSION, bunx
// ID@VERSION, pnpm dlx ID@VERSION, yarn dlx ID@VERSION (npm); uvx
// ID==VERSION (PyPI); docker or podman run -i --rm IMAGE:VERSION (OCI);
// dnx ID@VERSION --yes (NuGet).
// nil for a type mcphost does not install.
func Runners(registryType string) []string {
	switch registryType {
	case RegistryNPM:
		return []string{"npx", "bunx", "pnpm", "yarn"}
	case RegistryPyPI:
		return []string{"uvx"}
	case RegistryOCI:
		return []string{"docker", "podman"}
	case RegistryNuGet:
		return []string{"dnx"}
	}
	return nil
}

// checkPinned refuses a package that does not name one version: no
// version, or "latest" (for an OCI image, a tag or digest in its
// identifier does; a tag can still be moved by its publisher).
func checkPinned(p *Package) error {
	v := p.Version
	if p.RegistryType == RegistryOCI && v == "" && hasTagOrDigest(p.Identifier) {
		v = p.Identifier[strings.LastIndexAny(p.Identifier, ":@")+1:]
	}
	if v == "" || strings.EqualFold(v, "latest") {
		return &UnsupportedError{What: fmt.Sprintf("the %s package %s without a version (or \"latest\")", p.RegistryType, Printable(p.Identifier, 200)),
			Hint: "an approval must cover what runs, so mcphost installs a pinned version only; choose another package (--package N) or a remote (--remote N)"}
	}
	return nil
}

// UnsupportedError is a package or remote mcphost cannot install.
type UnsupportedError struct{ What, Hint string }

func (e *UnsupportedError) Error() string {
	return fmt.Sprintf("mcphost cannot install %s; %s", e.What, e.Hint)
}

func versionSuffix(sep, v string) string {
	if v == "" {
		return ""
	}
	return sep + v
}

// hasTagOrDigest reports whether an OCI reference names a tag or digest.
func hasTagOrDigest(ref string) bool {
	if strings.Contains(ref, "@") {
		return true
	}
	last := ref[strings.LastIndex(ref, "/")+1:]
	return strings.Contains(last, ":")
}

// varRef is a {NAME} in an input's value.
var varRef = regexp.MustCompile(`\{([A-Za-z0-9_.-]+)\}`)

type resolver struct{ resolve Resolver }

// value resolves one input: its value with its {variables} replaced, or
// the user's, or its default. ok is false for an optional input left out.
func (r resolver) value(n Need) (Value, bool, error) {
	in := n.Input
	if in.Value == "" {
		a, ok, err := r.resolve(n)
		if err != nil {
			return Value{}, false, err
		}
		switch {
		case ok && a.Env != "":
			return Value{FromEnv: a.Env, Secret: in.IsSecret}, true, nil
		case ok:
			return Value{Text: a.Value, Secret: in.IsSecret}, true, nil
		case in.Default != "":
			return Value{Text: in.Default, Secret: in.IsSecret}, true, nil
		case in.IsRequired:
			return Value{}, false, &MissingInputError{Need: n}
		}
		return Value{}, false, nil
	}
	out := Value{Secret: in.IsSecret}
	var b strings.Builder
	at := 0
	whole := ""
	missing := false
	for _, loc := range varRef.FindAllStringSubmatchIndex(in.Value, -1) {
		name := in.Value[loc[2]:loc[3]]
		vin, declared := in.Variables[name]
		if !declared {
			continue // text in braces, not a variable
		}
		b.WriteString(in.Value[at:loc[0]])
		at = loc[1]
		within := n.Key
		if n.In != "" {
			within = n.In
		}
		v, ok, err := r.value(Need{Key: name, Kind: KindVariable, In: n.Kind + " " + quote(within), Input: vin})
		if err != nil {
			return Value{}, false, err
		}
		if !ok {
			missing = true
			continue
		}
		out.Secret = out.Secret || v.Secret
		if v.FromEnv != "" {
			if loc[0] == 0 && loc[1] == len(in.Value) {
				whole = v.FromEnv
				continue
			}
			pn := Printable(name, 100)
			return Value{}, false, fmt.Errorf("the %s %s: its value %q joins text and {%s}: give {%s} (-e %s=VALUE) or the whole value: %w",
				n.Kind, Printable(n.Key, 100), Printable(in.Value, 100), pn, pn, pn, ErrComposedEnv)
		}
		b.WriteString(v.Text)
	}
	if missing {
		// An optional variable left out: so is what uses it.
		if in.IsRequired {
			return Value{}, false, &MissingInputError{Need: n}
		}
		return Value{}, false, nil
	}
	if whole != "" {
		out.FromEnv = whole
		return out, true, nil
	}
	b.WriteString(in.Value[at:])
	out.Text = b.String()
	return out, true, nil
}

// args resolves arguments: a positional one is its value, a named one its
// flag and then its value (the flag alone for a boolean that is "true").
func (r resolver) args(args []Argument, what string) ([]Value, error) {
	var out []Value
	for i, a := range args {
		key := strings.TrimLeft(a.Name, "-")
		if a.Type != ArgNamed {
			key = a.ValueHint
		}
		if key == "" {
			key = fmt.Sprintf("%s-%d", strings.ReplaceAll(what, " ", "-"), i+1)
		}
		v, ok, err := r.value(Need{Key: key, Kind: KindArgument, In: "", Input: a.Input})
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		if a.Type == ArgNamed {
			if a.Name == "" {
				return nil, fmt.Errorf("%s %d: a named argument without a name", what, i+1)
			}
			if a.Format == "boolean" && v.FromEnv == "" {
				if v.Text == "true" {
					out = append(out, Value{Text: a.Name})
				}
				continue
			}
			out = append(out, Value{Text: a.Name})
		}
		out = append(out, v)
	}
	return out, nil
}

func quote(s string) string { return fmt.Sprintf("%q", s) }
