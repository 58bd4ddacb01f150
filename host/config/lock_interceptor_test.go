package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// TestLockRecordsInterceptor: an interceptor plugin's entry keeps its
// interceptor flag and its options' schema through a write and a read; an
// entry without one is written as before (no interceptor attribute).
func TestLockRecordsInterceptor(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "lock.hcl")
	want := &Lock{Plugins: []*LockedPlugin{
		{Name: "guard-regex", Path: "/p/guard-regex", SHA256: strings.Repeat("ab", 32), Protocol: 1, Interceptor: true,
			Components: []*LockedComponent{{Kind: "interceptor", Name: "guard-regex", Attributes: []*LockedAttribute{
				{Name: "deny_arguments", Type: "list(string)"},
				{Name: "redact_results", Type: "list(string)"},
			}}}},
		{Name: "transport-ws", Path: "/p/transport-ws", SHA256: strings.Repeat("cd", 32), Protocol: 1, Transports: []string{"ws"}},
	}}
	if err := WriteLock(path, want); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	if n := strings.Count(string(b), "interceptor "); n != 1 {
		t.Errorf("the lock file has %d interceptor attributes, want 1:\n%s", n, b)
	}
	got, diags := ReadLock(path)
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if c := got.Find("guard-regex").Component("interceptor", "guard-regex"); c == nil || len(c.Attributes) != 2 {
		t.Errorf("Component(interceptor) = %+v", c)
	}
}
