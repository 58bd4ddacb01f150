package cli

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/mcpregistry"
	"github.com/mcphost/mcphost/host/redact"
)

// `mcphost server add [NAME] --from-registry IDENTIFIER[@VERSION]`: a
// server of an MCP Registry becomes a server block. A package becomes the
// stdio command that runs it (npx, uvx, docker, dnx), a remote an http or
// sse server; the inputs its publisher left to the user come from -e and
// -H, else a terminal prompt. A secret input is never written as a
// literal: given, it is stored (secret("NAME")); not given without a
// terminal, with --env-from or in the project scope, it is read from the
// environment at run time (env("NAME")). The block records registry =
// "NAME@VERSION" and, like a project server, runs only once approved.

// registryAddFlags are server add's registry flags.
type registryAddFlags struct {
	from    string
	url     string
	pkg     int
	remote  int
	envFrom bool
}

func (r *registryAddFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&r.from, "from-registry", "", "install the MCP Registry server `IDENTIFIER[@VERSION]` (default: its latest version); NAME is then optional")
	fl.StringVar(&r.url, "registry", "", "with --from-registry: the registry's `URL` (default $"+mcpregistry.EnvURL+", else "+mcpregistry.DefaultURL+")")
	fl.IntVar(&r.pkg, "package", 0, "with --from-registry: install package `N` (1: the first) of the server")
	fl.IntVar(&r.remote, "remote", 0, "with --from-registry: use remote `N` (1: the first) of the server")
	fl.BoolVar(&r.envFrom, "env-from", false, "with --from-registry: read secret inputs from environment variables at run time (env(\"NAME\")) instead of asking and storing them")
}

// addFromRegistry is server add --from-registry; args are what came
// before and after the flags (NAME, optional; nothing else).
func (a *app) addFromRegistry(cmd *cobra.Command, f *addFlags, args []string) error {
	r := &f.reg
	if r.from == "" {
		return fmt.Errorf("give NAME and a command or URL, or --from-registry IDENTIFIER\n%s", usageHint(cmd))
	}
	if len(args) > 1 {
		return fmt.Errorf("a server from a registry takes no command or URL (got %q)", args[1:])
	}
	id, version, err := config.ParseRegistryRef(r.from, false)
	if err != nil {
		return fmt.Errorf("--from-registry: %w", err)
	}
	name := ""
	if len(args) == 1 {
		name = args[0]
	} else if name = registryBlockName(id); name == "" {
		return errNoRegistryName
	}
	if !config.ValidServerName(name) {
		return fmt.Errorf("invalid server name %q: use letters and digits with single '-' or '_' between them, at most %d characters", name, config.MaxServerNameLen)
	}
	t, err := a.editTarget(cmd, f.scope)
	if err != nil {
		return err
	}
	// Before any secret is stored: one of the same name would be the
	// existing block's.
	if src, err := readIfExists(t.path); err != nil {
		return err
	} else if ok, err := config.HasServerBlock(src, t.path, name); err != nil {
		return err
	} else if ok {
		return fmt.Errorf("server %q is already in %s; remove it first (mcphost server remove %s), or give another NAME", name, t.path, name)
	}
	c, err := a.registryClient(r.url)
	if err != nil {
		return err
	}
	resp, err := c.Server(cmd.Context(), id, version)
	if err != nil {
		return err
	}
	s := &resp.Server
	if o := resp.Meta.Official; o != nil {
		switch o.Status {
		case mcpregistry.StatusDeleted:
			return fmt.Errorf("%s %s is marked deleted in %s: not installed", id, registryText(s.Version, 40), c.URL())
		case mcpregistry.StatusDeprecated:
			fmt.Fprintf(a.stderr, "warning: %s %s is deprecated in %s\n", id, registryText(s.Version, 40), c.URL())
		}
	}
	if s.Name != id {
		return fmt.Errorf("%s answered with server %q for %q", c.URL(), registryText(s.Name, 200), id)
	}
	if _, _, err := config.ParseRegistryRef(s.Name+"@"+s.Version, true); err != nil {
		return fmt.Errorf("%s: the registry's entry: %w", c.URL(), err)
	}
	pkg, remote, err := mcpregistry.Choose(s, mcpregistry.Choice{Package: r.pkg, Remote: r.remote, Transport: f.transport})
	if err != nil {
		return err
	}

	in, err := newRegistryInputs(f, a.isTerminal(a.stdin) && a.isTerminal(a.stderr), t.scope == config.ScopeProject)
	if err != nil {
		return err
	}
	in.ask = &inputPrompter{in: bufio.NewReader(a.stdin), out: a.stderr, readSecret: a.readHidden}
	var plan *mcpregistry.Plan
	if pkg != nil {
		plan, err = mcpregistry.PlanPackage(s, pkg, in.resolve)
	} else {
		plan, err = mcpregistry.PlanRemote(s, remote, in.resolve)
	}
	if err != nil {
		var missing *mcpregistry.MissingInputError
		if errors.As(err, &missing) {
			return fmt.Errorf("%w; give it with %s (see mcphost registry show %s)", err, cleanLine(inputFlag(missing.Need)), id)
		}
		return err
	}
	if err := in.unused(); err != nil {
		return err
	}

	secretsDir := config.SecretsDir(a.lookupEnv, a.workDir)
	e, stored, err := entryFromPlan(name, plan, t.path, func(n string) bool { return secretExists(secretsDir, n) })
	if err == nil && len(stored) > 0 && t.scope == config.ScopeProject {
		err = fmt.Errorf("a project file is shared: it cannot hold or read your %s; leave it out to read it from the environment at run time, or use -s local or -s user", cleanLine(stored[0].input))
	}
	if err == nil {
		// (--inherit-env is refused for a remote.)
		err = f.applyInheritEnv(e, remote != nil)
	}
	if err != nil {
		return err
	}
	if len(stored) > 0 {
		if secretsDir == "" {
			return errors.New("cannot find the configuration directory for the secrets: set HOME or MCPHOST_CONFIG_DIR")
		}
		for _, sv := range stored {
			if err := config.WriteSecret(secretsDir, sv.name, sv.value); err != nil {
				deleteSecrets(secretsDir, stored)
				return err
			}
		}
	}
	if remote != nil {
		if err := f.applyAuth(e); err != nil {
			deleteSecrets(secretsDir, stored)
			return err
		}
		if f.headersHelper != "" {
			e.HeadersHelper = strings.Fields(f.headersHelper)
		}
	}
	if err := a.addServer(cmd, f, e); err != nil {
		deleteSecrets(secretsDir, stored)
		return err
	}
	fmt.Fprintf(a.stdout, "From %s: %s %s (%s)\n", c.URL(), id, registryText(s.Version, 40), plan.Origin)
	for _, sv := range stored {
		fmt.Fprintf(a.stdout, "The secret %s is stored in %s (readable by you only)\n", cleanLine(sv.input), cleanLine(filepath.Join(secretsDir, sv.name)))
	}
	for _, ev := range in.fromEnv {
		note := ""
		if _, ok := a.lookupEnv(ev.env); !ok {
			note = " (not set here: set it before approving, and wherever mcphost runs)"
		}
		fmt.Fprintf(a.stdout, "The secret %s is read from $%s at run time%s\n", cleanLine(ev.input), cleanLine(ev.env), note)
	}
	if plan.Transport == mcpregistry.TransportStdio {
		if _, err := exec.LookPath(plan.Command); err != nil {
			fmt.Fprintf(a.stderr, "note: %s is not on PATH here; the server needs it%s\n", cleanLine(plan.Command), runtimeHints[plan.Command])
		}
	}
	if t.scope != config.ScopeProject {
		fmt.Fprintf(a.stdout, "Servers from a registry run only once approved (its tools are pinned when it first connects): mcphost config approve %s\n", name)
	}
	return nil
}

// runtimeHints say where the runners of packages come from.
var runtimeHints = map[string]string{
	"npx":    " (it comes with Node.js: https://nodejs.org)",
	"uvx":    " (it comes with uv: https://docs.astral.sh/uv/)",
	"docker": " (Docker: https://docs.docker.com/get-docker/)",
	"dnx":    " (it comes with the .NET 10 SDK: https://dotnet.microsoft.com/download)",
	"podman": " (Podman: https://podman.io/docs/installation)",
	"bunx":   " (it comes with Bun: https://bun.sh)",
	"pnpm":   " (pnpm: https://pnpm.io/installation)",
	"yarn":   " (Yarn: https://yarnpkg.com/getting-started/install)",
}

// storedSecret is a secret input to store as name.
type storedSecret struct{ name, value, input string }

func deleteSecrets(dir string, stored []storedSecret) {
	for _, s := range stored {
		config.DeleteSecret(dir, s.name)
	}
}

// entryFromPlan is the server block of plan; secret values become
// secret() of the returned secrets (named for the block and file path,
// never a name taken says exists: another server's secret) or env()
// calls. A value is secret when the publisher marked it so, or when its
// name says it is (API_KEY, Authorization, GITHUB_TOKEN: redact.SecretName).
func entryFromPlan(name string, plan *mcpregistry.Plan, path string, taken func(string) bool) (*config.ServerEntry, []storedSecret, error) {
	e := &config.ServerEntry{Name: name, Registry: plan.Registry}
	var stored []storedSecret
	used := map[string]bool{}
	unique := func(sn string) string {
		cand := sn
		for i := 2; used[cand] || taken(cand); i++ {
			suffix := fmt.Sprintf("-%d", i)
			base := sn
			if len(base)+len(suffix) > 128 {
				base = base[:128-len(suffix)]
			}
			cand = base + suffix
		}
		used[cand] = true
		return cand
	}
	put := func(kind, k string, v mcpregistry.Value, plain *map[string]string, secrets *map[string]config.SecretRef) {
		switch {
		case v.FromEnv != "":
			if *secrets == nil {
				*secrets = map[string]config.SecretRef{}
			}
			(*secrets)[k] = config.SecretRef{Env: v.FromEnv}
		case v.Secret || redact.SecretName(k):
			if *secrets == nil {
				*secrets = map[string]config.SecretRef{}
			}
			sn := unique(registrySecretName(name, path, k))
			(*secrets)[k] = config.SecretRef{Stored: sn}
			stored = append(stored, storedSecret{name: sn, value: v.Text, input: kind + " " + k})
		default:
			if *plain == nil {
				*plain = map[string]string{}
			}
			(*plain)[k] = v.Text
		}
	}
	switch plan.Transport {
	case mcpregistry.TransportStdio:
		e.Command = plan.Command
		for i, v := range plan.Args {
			if v.Secret || v.FromEnv != "" {
				return nil, nil, fmt.Errorf("argument %d of %s takes a secret: mcphost does not put a secret on a command line (where other users' ps can read it); install a remote or another package (--remote N, --package N)", i+1, plan.Origin)
			}
			e.Args = append(e.Args, v.Text)
		}
		for _, k := range planKeys(plan.Env) {
			put("environment variable", k, plan.Env[k], &e.Env, &e.SecretEnv)
		}
	case mcpregistry.TransportStreamableHTTP, mcpregistry.TransportSSE:
		e.Transport = config.TransportHTTP
		if plan.Transport == mcpregistry.TransportSSE {
			e.Transport = config.TransportSSE
		}
		if plan.URL.Secret || plan.URL.FromEnv != "" {
			return nil, nil, fmt.Errorf("the URL of %s takes a secret: mcphost writes a URL as it is", plan.Origin)
		}
		e.URL = plan.URL.Text
		for _, k := range planKeys(plan.Headers) {
			put("header", k, plan.Headers[k], &e.Headers, &e.SecretHeaders)
		}
	default:
		return nil, nil, fmt.Errorf("transport %q: not supported", plan.Transport)
	}
	return e, stored, nil
}

// secretExists reports whether dir holds a secret file name (an earlier
// server's, not to be replaced nor deleted).
func secretExists(dir, name string) bool {
	if dir == "" {
		return false
	}
	_, err := os.Lstat(filepath.Join(dir, name))
	return err == nil
}

func planKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// registrySecretName names the stored secret of input key of server name
// in file path: unique per file, server and input.
func registrySecretName(name, path, key string) string {
	sum := sha256.Sum256([]byte(path))
	k := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' {
			return r
		}
		return '_'
	}, key)
	n := name + "." + hex.EncodeToString(sum[:4]) + "." + k
	if len(n) > 128 {
		n = n[:128]
	}
	return n
}

// registryInputs answers a plan's inputs: from -e and -H, else a prompt.
type registryInputs struct {
	given       map[string]string // -e KEY=VALUE
	headers     map[string]string // -H, by lower-case name
	used        map[string]bool
	interactive bool
	// secretsFromEnv: a required secret not given is read from the
	// environment (--env-from, no terminal, the project scope).
	secretsFromEnv bool
	ask            *inputPrompter
	fromEnv        []struct{ input, env string }
}

func newRegistryInputs(f *addFlags, interactive, project bool) (*registryInputs, error) {
	in := &registryInputs{given: map[string]string{}, headers: map[string]string{}, used: map[string]bool{},
		interactive: interactive, secretsFromEnv: f.reg.envFrom || !interactive || project}
	for i, kv := range f.env {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("-e number %d: want KEY=VALUE", i+1)
		}
		in.given[k] = v
	}
	for i, h := range f.headers {
		k, v, ok := strings.Cut(h, ":")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, fmt.Errorf("-H number %d: want \"Name: value\"", i+1)
		}
		in.headers[strings.ToLower(strings.TrimSpace(k))] = strings.TrimSpace(v)
	}
	return in, nil
}

func (in *registryInputs) resolve(n mcpregistry.Need) (mcpregistry.Answer, bool, error) {
	v, ok := in.given[n.Key]
	usedKey := "e:" + n.Key
	if n.Kind == mcpregistry.KindHeader {
		if hv, hok := in.headers[strings.ToLower(n.Key)]; hok {
			v, ok, usedKey = hv, true, "h:"+strings.ToLower(n.Key)
		}
	}
	if ok {
		in.used[usedKey] = true
		if err := checkChoice(n, v); err != nil {
			return mcpregistry.Answer{}, false, err
		}
		return mcpregistry.Answer{Value: v}, true, nil
	}
	if n.Input.IsSecret && n.Input.IsRequired && in.secretsFromEnv {
		env := envNameFor(n)
		in.fromEnv = append(in.fromEnv, struct{ input, env string }{n.Kind + " " + n.Key, env})
		return mcpregistry.Answer{Env: env}, true, nil
	}
	if !in.interactive || !n.Input.IsRequired {
		return mcpregistry.Answer{}, false, nil
	}
	for {
		v, ok, err := in.ask.ask(n)
		if err != nil || !ok {
			return mcpregistry.Answer{}, false, err
		}
		if err := checkChoice(n, v); err != nil {
			fmt.Fprintln(in.ask.out, err)
			continue
		}
		return mcpregistry.Answer{Value: v}, true, nil
	}
}

// unused refuses -e and -H values that named no input (a typo would
// otherwise leave the input to its default).
func (in *registryInputs) unused() error {
	var bad []string
	for k := range in.given {
		if !in.used["e:"+k] {
			bad = append(bad, "-e "+k)
		}
	}
	for k := range in.headers {
		if !in.used["h:"+k] {
			bad = append(bad, "-H "+k)
		}
	}
	if len(bad) > 0 {
		slices.Sort(bad)
		return fmt.Errorf("no input of the server is named by %s (see mcphost registry show for its inputs)", strings.Join(bad, ", "))
	}
	return nil
}

func checkChoice(n mcpregistry.Need, v string) error {
	if len(n.Input.Choices) > 0 && !slices.Contains(n.Input.Choices, v) {
		return fmt.Errorf("the %s %s takes one of %s", n.Kind, cleanLine(n.Key), cleanLine(strings.Join(n.Input.Choices, ", ")))
	}
	return nil
}

// inputFlag is how the user gives need on the command line.
func inputFlag(n mcpregistry.Need) string {
	if n.Kind == mcpregistry.KindHeader {
		return fmt.Sprintf("-H %q", n.Key+": VALUE")
	}
	return "-e " + n.Key + "=VALUE"
}

// envNameFor is the environment variable a secret input is read from: an
// environment variable's own name, else the input's key in upper case
// with what a variable name cannot hold as '_' ("X-API-Key" → X_API_KEY).
func envNameFor(n mcpregistry.Need) string {
	if n.Kind == mcpregistry.KindEnv && config.ValidEnvName(n.Key) {
		return n.Key
	}
	s := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' {
			return r - 'a' + 'A'
		}
		if r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' {
			return r
		}
		return '_'
	}, n.Key)
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		s = "MCP_" + s
	}
	return s
}

// inputPrompter asks for an input on a terminal: secrets without echo.
type inputPrompter struct {
	in         *bufio.Reader
	out        io.Writer
	readSecret func() (string, error)
}

// ask prompts for n; ok is false for an empty answer (the default, if any).
func (p *inputPrompter) ask(n mcpregistry.Need) (string, bool, error) {
	pr := registryText
	var notes []string
	if n.Input.IsSecret {
		notes = append(notes, "secret, not shown")
	}
	if n.Input.Default != "" {
		notes = append(notes, "Enter for "+pr(n.Input.Default, 100))
	}
	if len(n.Input.Choices) > 0 {
		notes = append(notes, "one of "+pr(strings.Join(n.Input.Choices, ", "), 200))
	}
	what := n.Kind + " " + pr(n.Key, 100)
	if n.In != "" {
		what += " (in " + pr(n.In, 100) + ")"
	}
	if d := pr(n.Input.Description, 200); d != "" {
		fmt.Fprintf(p.out, "%s: %s\n", what, d)
	} else {
		fmt.Fprintln(p.out, what)
	}
	fmt.Fprintf(p.out, "%s", pr(n.Key, 100))
	if len(notes) > 0 {
		fmt.Fprintf(p.out, " [%s]", strings.Join(notes, "; "))
	}
	fmt.Fprint(p.out, ": ")
	var v string
	var err error
	if n.Input.IsSecret {
		v, err = p.readSecret()
		fmt.Fprintln(p.out)
	} else {
		v, err = p.in.ReadString('\n')
		if errors.Is(err, io.EOF) && v != "" {
			err = nil
		}
	}
	if err != nil {
		return "", false, fmt.Errorf("reading %s: %w", n.Key, err)
	}
	v = strings.TrimRight(v, "\r\n")
	return v, v != "", nil
}

// readHidden reads a line from the terminal without echo.
func (a *app) readHidden() (string, error) {
	f, ok := a.stdin.(*os.File)
	if !ok {
		return "", errors.New("not a terminal")
	}
	b, err := term.ReadPassword(int(f.Fd()))
	return string(b), err
}
