package cli

import (
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/mcphost/mcphost/host/clientconf"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/redact"
)

// relocationVars are mcphost's variables that move its files: a gateway a
// client starts must see the same ones to serve the same configuration.
var relocationVars = []string{config.EnvConfigDir, config.EnvLocalConfig, config.EnvManagedConfig}

// stdioEntry fills e with the command that starts the gateway on stdio for
// client c in scope sc. In the user scope: this executable (as found on
// the PATH when it is the same file), the --config files as absolute
// paths, the relocation variables set here in env. In the project scope
// (a file meant to be committed): `mcphost` from the PATH and --config
// files relative to the project; what only holds on this machine is
// refused.
func (a *app) stdioEntry(c clientconf.Client, sc clientconf.Scope, e *clientconf.Entry) error {
	e.Args = []string{"serve", "--naming", "server"}
	if sc == clientconf.ScopeProject {
		return a.projectStdioEntry(c, e)
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("finding this mcphost executable: %w", err)
	}
	e.Command = exe
	if onPath, err := exec.LookPath("mcphost"); err == nil && filepath.IsAbs(onPath) && sameFile(onPath, exe) {
		e.Command = onPath // not the symbolic link's target, which an upgrade moves
	}
	if strings.Contains(exe, string(filepath.Separator)+"go-build") {
		fmt.Fprintf(a.stderr, "Warning: %s is a temporary build (go run): the client could not start it later; install mcphost (make install, or go install ./cmd/mcphost) and run that one\n", exe)
	}
	for _, f := range a.configs {
		if !filepath.IsAbs(f) {
			f = filepath.Join(a.workDir, f)
		}
		e.Args = append(e.Args, "--config", filepath.Clean(f))
	}
	for _, k := range relocationVars {
		if v, ok := a.lookupEnv(k); ok && v != "" {
			e.Env = append(e.Env, [2]string{k, v})
		}
	}
	return nil
}

func (a *app) projectStdioEntry(c clientconf.Client, e *clientconf.Entry) error {
	e.Command = "mcphost"
	for _, k := range relocationVars {
		if v, ok := a.lookupEnv(k); ok && v != "" {
			fmt.Fprintf(a.stderr, "Warning: %s is set here (%s) but not written into the project file, which is shared: the client's gateway uses it only when the client's own environment has it\n", k, v)
		}
	}
	loc := config.Locate(a.lookupEnv, a.workDir)
	root := loc.ProjectRoot
	for _, f := range a.configs {
		if !filepath.IsAbs(f) {
			f = filepath.Join(a.workDir, f)
		}
		f = filepath.Clean(f)
		if isProjectConfig(loc, f) {
			continue // serve finds it from the client's working directory
		}
		rel, err := filepath.Rel(root, f)
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return &usageError{fmt.Errorf("--config %s is outside the project %s: a project file is shared, so it cannot name it; connect in the user scope, or move the file into the project", f, root)}
		}
		rel = filepath.ToSlash(rel)
		if c.ID == "vscode" {
			rel = "${workspaceFolder}/" + rel
		}
		e.Args = append(e.Args, "--config", rel)
	}
	return nil
}

// isProjectConfig reports whether f is one of the project files serve
// discovers by itself.
func isProjectConfig(loc config.Locations, f string) bool {
	for _, p := range loc.Project {
		if sameFile(p, f) || filepath.Clean(p) == f {
			return true
		}
	}
	return false
}

func sameFile(a, b string) bool {
	sa, err := os.Stat(a)
	if err != nil {
		return false
	}
	sb, err := os.Stat(b)
	return err == nil && os.SameFile(sa, sb)
}

// httpPathWarning says when an --http URL has no path: the gateway serves
// /mcp, so the client would fail later with a confusing error.
func httpPathWarning(s string) string {
	u, err := url.Parse(s)
	if err != nil || (u.Path != "" && u.Path != "/") {
		return ""
	}
	return fmt.Sprintf("%s has no path: `mcphost serve --http` serves its MCP endpoint at /mcp (%s)", s, strings.TrimSuffix(s, "/")+"/mcp")
}

// envRefValue is a string value that is only a reference to an environment
// variable, as the clients write one (${VAR}, ${env:VAR}, $VAR, with an
// optional "Bearer "): a name, never a secret.
var envRefValue = regexp.MustCompile(`"(?:Bearer )?(?:\$\{(?:env:)?[A-Za-z_][A-Za-z0-9_]*\}|\$[A-Za-z_][A-Za-z0-9_]*)"`)

// maskDiffLine masks the secrets of one line of a client file's diff,
// whichever side it is on: a changed line may be another server's (an
// edit touches the line before it; a compact file is one line), or an
// entry the user edited by hand. A value that only refers to an
// environment variable stays readable.
func maskDiffLine(line string) string {
	masked := redact.String(line)
	if masked == line {
		return line
	}
	if refs := envRefValue.ReplaceAllString(line, `"`+redact.Mask+`"`); refs != line && redact.String(refs) == refs {
		return line // only references were masked
	}
	return masked
}
