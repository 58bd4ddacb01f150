package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/host/config"
)

// TestSecretKeptWhileRead: server remove deletes the secret server add
// stored for the block only when no other block of any scope still reads
// it.
func TestSecretKeptWhileRead(t *testing.T) {
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	env := map[string]string{"HOME": home, config.EnvManagedConfig: filepath.Join(dir, "none.hcl"), config.EnvLocalConfig: filepath.Join(dir, "local.hcl")}
	var stdout, stderr bytes.Buffer
	a := &app{stdin: strings.NewReader("s3cr3t-value\n"), stdout: &stdout, stderr: &stderr,
		lookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }, workDir: dir}
	run := func(args ...string) error {
		t.Helper()
		root := a.rootCmd()
		root.SetArgs(args)
		return root.Execute()
	}
	if err := run("server", "add", "--client-id", "c", "--client-secret", "crm", "http://127.0.0.1:9/mcp"); err != nil {
		t.Fatal(err, stderr.String())
	}
	own := secretName("crm", filepath.Join(dir, "local.hcl"))
	secrets := filepath.Join(home, ".config", "mcphost", config.SecretsDirName)
	if _, err := os.Stat(filepath.Join(secrets, own)); err != nil {
		t.Fatal(err)
	}
	// Another block, in the user scope, reads the same secret.
	user := filepath.Join(home, ".config", "mcphost", "config.hcl")
	os.WriteFile(user, []byte("server \"crm2\" {\n  transport = \"http\"\n  url = \"http://127.0.0.1:9/two\"\n  oauth {\n    client_id = \"c\"\n    client_secret = secret(\""+own+"\")\n  }\n}\n"), 0o600)
	if err := run("server", "remove", "crm"); err != nil {
		t.Fatal(err, stderr.String())
	}
	if _, err := os.Stat(filepath.Join(secrets, own)); err != nil {
		t.Fatalf("a secret another block reads was deleted: %v", err)
	}
	if !strings.Contains(stderr.String(), "is kept") {
		t.Errorf("no warning: %s", stderr.String())
	}
	if strings.Contains(stdout.String()+stderr.String(), "s3cr3t-value") {
		t.Error("the secret was printed")
	}
}
