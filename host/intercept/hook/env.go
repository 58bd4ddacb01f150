package hook

import (
	"regexp"
	"sort"

	"github.com/mcphost/mcphost/host/conn"
)

// childEnv is a command hook's environment: the host's values of
// conn.BaseEnv() (what every stdio server gets) and of platformEnv, then of
// inherit, then env, then CLAUDE_PROJECT_DIR (dir) and MCPHOST_HOOK=1.
// Nothing else of the host's environment reaches the hook.
func childEnv(lookup func(string) (string, bool), inherit []string, env map[string]string, dir string) []string {
	vars := map[string]string{}
	for _, names := range [][]string{conn.BaseEnv(), platformEnv, inherit} {
		for _, k := range names {
			if v, ok := lookup(k); ok {
				vars[k] = v
			}
		}
	}
	for k, v := range env {
		vars[k] = v
	}
	vars["CLAUDE_PROJECT_DIR"] = dir
	vars["MCPHOST_HOOK"] = "1"
	out := make([]string, 0, len(vars))
	for k, v := range vars {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// envRef is $NAME or ${NAME} in a header value.
var envRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)`)

// interpolate replaces $NAME and ${NAME} in s by the host's value of NAME
// when NAME is in allowed, by "" otherwise (Claude Code's allowedEnvVars).
func interpolate(s string, allowed map[string]bool, lookup func(string) (string, bool)) string {
	return envRef.ReplaceAllStringFunc(s, func(m string) string {
		sub := envRef.FindStringSubmatch(m)
		name := sub[1]
		if name == "" {
			name = sub[2]
		}
		if !allowed[name] {
			return ""
		}
		v, _ := lookup(name)
		return v
	})
}
