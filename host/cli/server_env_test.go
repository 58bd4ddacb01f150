package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/host/config"
)

// TestServerAddInheritEnv: server add --inherit-env (repeatable and
// comma-separated) writes inherit_env; names are checked, and a value
// given by mistake is never echoed.
func TestServerAddInheritEnv(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		want    string // in the written file
		wantErr string
	}{
		{name: "repeatable and comma-separated", args: []string{"--inherit-env", "HTTPS_PROXY,NODE_EXTRA_CA_CERTS", "--inherit-env", "CORP_CA", "--inherit-env", "HTTPS_PROXY", "srv", "--", "npx", "-y", "pkg"},
			want: `inherit_env = ["HTTPS_PROXY", "NODE_EXTRA_CA_CERTS", "CORP_CA"]`},
		{name: "after the name", args: []string{"srv", "--inherit-env=A_1", "--", "cmd"}, want: `inherit_env = ["A_1"]`},
		{name: "invalid name", args: []string{"--inherit-env", "1BAD", "srv", "--", "cmd"}, wantErr: `"1BAD" is not a valid environment variable name`},
		{name: "a value given", args: []string{"--inherit-env", "TOKEN=sk-s3cr3t", "srv", "--", "cmd"}, wantErr: "takes variable names"},
		{name: "remote server", args: []string{"--inherit-env", "A", "srv", "http://127.0.0.1:9/mcp"}, wantErr: "stdio server"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			local := filepath.Join(dir, "local.hcl")
			env := map[string]string{"HOME": filepath.Join(dir, "home"), config.EnvManagedConfig: filepath.Join(dir, "none.hcl"), config.EnvLocalConfig: local}
			var stdout, stderr bytes.Buffer
			a := &app{stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr,
				lookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }, workDir: dir}
			root := a.rootCmd()
			root.SetArgs(append([]string{"server", "add"}, tc.args...))
			err := root.Execute()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				if strings.Contains(err.Error()+stdout.String()+stderr.String(), "s3cr3t") {
					t.Errorf("a value was echoed: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err, stderr.String())
			}
			b, err := os.ReadFile(local)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(b), tc.want) {
				t.Errorf("file lacks %s:\n%s", tc.want, b)
			}
		})
	}
}
