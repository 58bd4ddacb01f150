package deploy

import (
	"debug/elf"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/moby/buildkit/frontend/dockerfile/instructions"
	"github.com/moby/buildkit/frontend/dockerfile/linter"
	"github.com/moby/buildkit/frontend/dockerfile/parser"
	"github.com/moby/patternmatcher"
	"github.com/moby/patternmatcher/ignorefile"
)

// The image is built from the repository's root.
const (
	repoRoot   = ".."
	dockerfile = repoRoot + "/Dockerfile"
)

// image is the Dockerfile as parsed by BuildKit (the parser `docker build`
// uses), with its meta ARGs' defaults expanded in FROM lines.
type image struct {
	stages []instructions.Stage
	args   map[string]string
}

// parseDockerfile parses and lints the Dockerfile: a parser warning or a
// finding of BuildKit's own checks (those of `docker build --check`,
// experimental ones included) fails the test.
func parseDockerfile(t *testing.T) *image {
	t.Helper()
	f, err := os.Open(dockerfile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	res, err := parser.Parse(f)
	if err != nil {
		t.Fatalf("%s: %v", dockerfile, err)
	}
	for _, w := range res.Warnings {
		t.Errorf("%s:%d: %s", dockerfile, w.Location.Start.Line, w.Short)
	}
	lint := linter.New(&linter.Config{ExperimentalAll: true, Warn: func(rule, desc, url, msg string, loc []parser.Range) {
		line := 0
		if len(loc) > 0 {
			line = loc[0].Start.Line
		}
		t.Errorf("%s:%d: %s: %s (%s)", dockerfile, line, rule, msg, url)
	}})
	stages, metaArgs, err := instructions.Parse(res.AST, lint)
	if err != nil {
		t.Fatalf("%s: %v", dockerfile, err)
	}
	im := &image{stages: stages, args: map[string]string{}}
	for _, a := range metaArgs {
		for _, kv := range a.Args {
			im.args[kv.Key] = kv.ValueString()
		}
	}
	for i := range im.stages {
		im.stages[i].BaseName = os.Expand(im.stages[i].BaseName, func(k string) string {
			v, ok := im.args[k]
			if !ok {
				t.Errorf("%s: FROM %s: ARG %s has no default", dockerfile, im.stages[i].BaseName, k)
			}
			return v
		})
	}
	if len(im.stages) < 2 {
		t.Fatalf("%s: %d stage(s); want a build stage and a final one", dockerfile, len(im.stages))
	}
	return im
}

func (im *image) final() *instructions.Stage { return &im.stages[len(im.stages)-1] }

func (im *image) stage(name string) *instructions.Stage {
	for i := range im.stages {
		if strings.EqualFold(im.stages[i].Name, name) {
			return &im.stages[i]
		}
	}
	return nil
}

// env returns the environment a stage's ENV lines set (a stage built on
// another stage of the file starts from that one's).
func (im *image) env(s *instructions.Stage) map[string]string {
	env := map[string]string{}
	if base := im.stage(s.BaseName); base != nil && base != s {
		env = im.env(base)
	}
	for _, c := range s.Commands {
		if e, ok := c.(*instructions.EnvCommand); ok {
			for _, kv := range e.Env {
				env[kv.Key] = kv.Value
			}
		}
	}
	return env
}

// commands returns a stage's commands of type T.
func commands[T instructions.Command](s *instructions.Stage) []T {
	var out []T
	for _, c := range s.Commands {
		if t, ok := c.(T); ok {
			out = append(out, t)
		}
	}
	return out
}

// makeBIN returns the Makefile's output directory (BIN) and checks that
// `make build` writes the commands to BIN/ and the plugins to BIN/plugins/.
func makeBIN(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	mk := string(b)
	m := regexp.MustCompile(`(?m)^BIN\s*:?=\s*(\S+)\s*$`).FindStringSubmatch(mk)
	if m == nil {
		t.Fatal("Makefile: no BIN := DIR")
	}
	recipe := regexp.MustCompile(`(?ms)^build:[^\n]*\n((?:\t[^\n]*\n)+)`).FindStringSubmatch(mk)
	if recipe == nil {
		t.Fatal("Makefile: no build target")
	}
	for _, want := range []string{"-o $(BIN)/ ./cmd/...", "-o $(BIN)/plugins/ ./plugins/..."} {
		if !strings.Contains(recipe[1], want) {
			t.Errorf("Makefile: the build recipe no longer has %q; the Dockerfile copies what it made from there:\n%s", want, recipe[1])
		}
	}
	return m[1]
}

func TestDockerfile(t *testing.T) {
	im := parseDockerfile(t)
	final := im.final()

	// The final base: pinned to a tag (or digest), never latest.
	base := final.BaseName
	if im.stage(base) != nil {
		t.Fatalf("the final stage is built on stage %q; want a base image", base)
	}
	if !strings.Contains(base, "@sha256:") {
		_, tag, _ := strings.Cut(base[strings.LastIndex(base, "/")+1:], ":")
		if tag == "" || tag == "latest" {
			t.Errorf("final base %q: want a tag other than latest, or a digest", base)
		}
	}

	// A numeric, non-root USER (runAsNonRoot can only check a number).
	users := commands[*instructions.UserCommand](final)
	if len(users) == 0 {
		t.Fatal("the final stage has no USER: it would run as root")
	}
	user := users[len(users)-1].User
	uid, gid, _ := strings.Cut(user, ":")
	if n, err := strconv.Atoi(uid); err != nil || n == 0 {
		t.Errorf("USER %s: want a numeric uid other than 0", user)
	}
	if gid != "" {
		if _, err := strconv.Atoi(gid); err != nil {
			t.Errorf("USER %s: want a numeric gid", user)
		}
	}

	// ENTRYPOINT is mcphost, in exec form (signals reach it as PID 1).
	eps := commands[*instructions.EntrypointCommand](final)
	if len(eps) != 1 || eps[0].PrependShell || len(eps[0].CmdLine) != 1 || path.Base(eps[0].CmdLine[0]) != "mcphost" {
		t.Fatalf("ENTRYPOINT: want [\".../mcphost\"] in exec form, got %+v", eps)
	}
	entrypoint := eps[0].CmdLine[0]

	// The binaries come from the stage that ran `make build` with cgo off,
	// at the paths the Makefile writes them to.
	copies := commands[*instructions.CopyCommand](final)
	var fromBuild *instructions.Stage
	var buildDir string
	copied := map[string]*instructions.CopyCommand{} // destination → COPY
	for _, c := range copies {
		if len(c.SourcePaths) != 1 {
			t.Errorf("%s: copy one source at a time (its destination names it)", c)
		}
		if c.From == "" {
			t.Errorf("%s: the final stage copies only from the build stage (the context is sources)", c)
			continue
		}
		s := im.stage(c.From)
		if s == nil {
			t.Errorf("%s: --from=%s is not a stage of the file", c, c.From)
			continue
		}
		if fromBuild != nil && s != fromBuild {
			t.Errorf("%s: copies from two stages", c)
		}
		fromBuild = s
		copied[c.DestPath] = c
	}
	if fromBuild == nil {
		t.Fatal("the final stage copies nothing from a build stage")
	}
	for _, w := range commands[*instructions.WorkdirCommand](fromBuild) {
		buildDir = w.Path
	}
	if !strings.HasPrefix(fromBuild.BaseName, "golang:") {
		t.Errorf("build stage base %q: want golang:", fromBuild.BaseName)
	}
	ranMake := false
	copiedContext := false
	for _, c := range fromBuild.Commands {
		switch c := c.(type) {
		case *instructions.CopyCommand:
			if slices.Contains(c.SourcePaths, ".") {
				copiedContext = true
			}
		case *instructions.RunCommand:
			if strings.Join(c.CmdLine, " ") == "make build" || strings.Join(c.CmdLine, " ") == "CGO_ENABLED=0 make build" {
				if !copiedContext {
					t.Errorf("%s runs before COPY . .", c)
				}
				ranMake = true
			}
		}
	}
	if !ranMake {
		t.Error("the build stage does not RUN make build")
	}
	if env := im.env(fromBuild); env["CGO_ENABLED"] != "0" {
		t.Errorf("build stage: CGO_ENABLED=%q; want 0 (static binaries for a static base)", env["CGO_ENABLED"])
	}
	bin := path.Join(buildDir, makeBIN(t))
	if c := copied[entrypoint]; c == nil || c.SourcePaths[0] != path.Join(bin, "mcphost") {
		t.Errorf("ENTRYPOINT %s: want it copied from %s (what make build makes), got %v", entrypoint, path.Join(bin, "mcphost"), c)
	}

	// The Go toolchain of the build stage is the one go.mod asks for.
	if goVersion := goDirective(t); !strings.HasPrefix(fromBuild.BaseName, "golang:"+goVersion+"-") {
		t.Errorf("build stage base %q: want golang:%s-… (go.mod's go line, built with GOTOOLCHAIN=local)", fromBuild.BaseName, goVersion)
	}

	// Plugins: in a directory copied from the build stage as it was locked
	// there (same paths: the lock records each binary's path), root-owned
	// (COPY without --chown), and the lock file beside them.
	fenv, benv := im.env(final), im.env(fromBuild)
	for _, k := range []string{"MCPHOST_PLUGIN_DIR", "MCPHOST_PLUGIN_LOCK"} {
		if fenv[k] == "" || fenv[k] != benv[k] {
			t.Errorf("%s: final %q, build stage %q; want the same path in both (the lock file records it)", k, fenv[k], benv[k])
		}
		c := copyOf(copied, fenv[k])
		if c == nil {
			t.Errorf("%s=%s: not copied from the build stage", k, fenv[k])
			continue
		}
		if strings.TrimSuffix(c.SourcePaths[0], "/") != strings.TrimSuffix(c.DestPath, "/") {
			t.Errorf("%s: copied from %s to %s; want the same path (the lock file records it)", c, c.SourcePaths[0], c.DestPath)
		}
		if c.Chown != "" || c.Chmod != "" {
			t.Errorf("%s: the plugins must stay root's and read-only to the gateway's user", c)
		}
	}
	lockRun := ""
	for _, r := range commands[*instructions.RunCommand](fromBuild) {
		if s := strings.Join(r.CmdLine, " "); strings.Contains(s, "plugins lock") {
			lockRun = s
		}
	}
	for _, want := range []string{"bin/plugins/", "plugins lock", "plugins verify", "-m 0755", "chmod 0644 \"$MCPHOST_PLUGIN_LOCK\""} {
		if !strings.Contains(lockRun, want) {
			t.Errorf("build stage: no RUN with %q (plugins installed 0755, locked, the lock readable, verified)", want)
		}
	}

	// No download at build time that the Dockerfile does not pin.
	for _, s := range im.stages {
		for _, a := range commands[*instructions.AddCommand](&s) {
			for _, src := range a.SourcePaths {
				if strings.Contains(src, "://") || strings.HasPrefix(src, "git@") {
					t.Errorf("%s: ADD of a URL; fetch in a RUN with a checksum, or COPY", a)
				}
			}
		}
	}

	// The port: EXPOSE matches CMD's --http.
	exposes := commands[*instructions.ExposeCommand](final)
	cmds := commands[*instructions.CmdCommand](final)
	if len(exposes) != 1 || len(cmds) != 1 {
		t.Fatalf("final stage: want one EXPOSE and one CMD, got %d and %d", len(exposes), len(cmds))
	}
	args := cmds[0].CmdLine
	i := slices.Index(args, "--http")
	if i < 0 || i+1 >= len(args) || !strings.HasSuffix(args[i+1], ":"+exposes[0].Ports[0]) || !slices.Contains(args, "--allow-non-loopback") {
		t.Errorf("CMD %v: want serve --http 0.0.0.0:%s --allow-non-loopback", args, exposes[0].Ports[0])
	}
}

// copyOf returns the COPY whose destination holds p.
func copyOf(copied map[string]*instructions.CopyCommand, p string) *instructions.CopyCommand {
	for dest, c := range copied {
		if d := strings.TrimSuffix(dest, "/"); p == d || strings.HasPrefix(p, d+"/") {
			return c
		}
	}
	return nil
}

// goDirective returns the go line of the main module's go.mod.
func goDirective(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^go (\S+)$`).FindSubmatch(b)
	if m == nil {
		t.Fatal("go.mod: no go line")
	}
	return string(m[1])
}

// TestDockerignore: the build context has what make build needs, and not
// the host's bin/ (the image must not pick up binaries built outside it).
func TestDockerignore(t *testing.T) {
	f, err := os.Open(filepath.Join(repoRoot, ".dockerignore"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	patterns, err := ignorefile.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	pm, err := patternmatcher.New(patterns)
	if err != nil {
		t.Fatal(err)
	}
	ignored := func(p string) bool {
		ok, err := pm.MatchesOrParentMatches(p)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	for _, p := range []string{"bin/mcphost", "bin/plugins/transport-ws", ".git/HEAD"} {
		if !ignored(p) {
			t.Errorf(".dockerignore: %s is sent to the builder", p)
		}
	}
	need := []string{"go.mod", "go.sum", "Makefile"}
	for _, dir := range []string{"cmd", "plugins", "host", "sdk", "internal"} {
		err := filepath.WalkDir(filepath.Join(repoRoot, dir), func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(p, ".go") && !strings.HasSuffix(p, "_test.go") {
				rel, _ := filepath.Rel(repoRoot, p)
				need = append(need, filepath.ToSlash(rel))
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range need {
		if ignored(p) {
			t.Errorf(".dockerignore excludes %s, which make build needs", p)
		}
	}
}

// TestImageBinariesAreStatic runs the build stage's build — make build with
// the stage's environment (CGO_ENABLED=0) — and checks that every binary
// the image gets is static: the final base has no libc.
func TestImageBinariesAreStatic(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binaries (-short)")
	}
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make")
	}
	im := parseDockerfile(t)
	var build *instructions.Stage
	for _, c := range commands[*instructions.CopyCommand](im.final()) {
		build = im.stage(c.From)
	}
	bin, err := filepath.Abs(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("make", "-C", repoRoot, "build", "BIN="+bin)
	cmd.Env = os.Environ()
	for k, v := range im.env(build) {
		if strings.HasPrefix(k, "MCPHOST_") {
			continue
		}
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make build: %v\n%s", err, out)
	}
	var files []string
	for _, glob := range []string{"*", "plugins/*"} {
		m, _ := filepath.Glob(filepath.Join(bin, glob))
		files = append(files, m...)
	}
	n := 0
	for _, p := range files {
		if fi, err := os.Stat(p); err != nil || fi.IsDir() {
			continue
		}
		f, err := elf.Open(p)
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		for _, prog := range f.Progs {
			if prog.Type == elf.PT_INTERP {
				t.Errorf("%s is dynamically linked; the final image has no libc", filepath.Base(p))
			}
		}
		f.Close()
		n++
	}
	if n < 3 {
		t.Errorf("make build made %d binaries; want mcphost, mcphost-demo and the plugins", n)
	}
}
