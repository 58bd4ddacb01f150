package redact

import "testing"

// TestSecretName: the one secret-name heuristic (import, logs, the ask
// prompt): pwd, db_key, GITHUB_PAT, private_key and passphrase are secrets
// (the import's old list had the first four, the redactor's none of them);
// names that merely contain the letters are not.
func TestSecretName(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]bool{
		"GITHUB_TOKEN": true, "client_secret": true, "DB_PASSWORD": true, "passwd": true, "apiKey": true,
		"X-API-Key": true, "Authorization": true, "Cookie": true, "session_id": true, "code_verifier": true,
		"pwd": true, "DB_PWD": true, "db_key": true, "KEY": true, "GITHUB_PAT": true, "private_key": true,
		"privateKey": true, "ssh-passphrase": true, "AWS_ACCESS_KEY_ID": true, "credentials": true,
		"LOG_LEVEL": false, "path": false, "keyboard": false, "monkey": false, "patch": false, "HOME": false, "query": false,
	} {
		if got := SecretName(name); got != want {
			t.Errorf("SecretName(%q) = %v, want %v", name, got, want)
		}
	}
}
