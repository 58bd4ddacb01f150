package gateway

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/gateway/wire"
	"github.com/mcphost/mcphost/host/inbound"
	"github.com/mcphost/mcphost/internal/sealbox"
)

func sessionKey(t testing.TB) string {
	t.Helper()
	b := make([]byte, sealbox.KeySize)
	rand.Read(b)
	return base64.StdEncoding.EncodeToString(b)
}

func keysOf(t testing.TB, s string) *sealbox.Keys {
	t.Helper()
	k, err := sealbox.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestTaskIDsPerPrincipalAndReplica: a task id opens for the principal it
// was issued to only, on any replica given the same keys (and after a
// rotation that keeps the old key), and on no other; another principal's
// tasks/get and tasks/cancel of it are answered -32602, as an id never
// issued, before anything is sent upstream (this gateway has no host: a
// request sent upstream would panic).
func TestTaskIDsPerPrincipalAndReplica(t *testing.T) {
	t.Parallel()
	k1, k2 := sessionKey(t), sessionKey(t)
	one := &Gateway{keys: keysOf(t, k1), log: hclog.NewNullLogger()}
	replica := &Gateway{keys: keysOf(t, k1)}
	rotated := &Gateway{keys: keysOf(t, k2+","+k1)}
	other := &Gateway{keys: keysOf(t, k2)}
	alice := host.WithCaller(context.Background(), &inbound.Principal{Issuer: "https://idp", Subject: "alice"}, "")
	bob := host.WithCaller(context.Background(), &inbound.Principal{Issuer: "https://idp", Subject: "bob"}, "")
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		id := (*taskIDs)(one).Outward(alice, "srv", version, "up-1")
		want := taskRef{server: "srv", version: version, upstream: "up-1"}
		for _, tc := range []struct {
			name string
			g    *Gateway
			ctx  context.Context
			ok   bool
		}{
			{"issuer", one, alice, true},
			{"replica", replica, alice, true},
			{"rotated", rotated, alice, true},
			{"other keys", other, alice, false},
			{"other principal", one, bob, false},
			{"no principal", one, context.Background(), false},
		} {
			ref, ok := openTask(tc.g.taskKeys(), callerID(tc.ctx), id)
			if ok != tc.ok || ok && ref != want {
				t.Errorf("%s %s: %+v %v, want %v", version, tc.name, ref, ok, tc.ok)
			}
		}
		caps := []byte(`{"extensions":{"io.modelcontextprotocol/tasks":{}}}`)
		for _, method := range []string{"tasks/get", "tasks/cancel"} {
			var m wire.Message
			req, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 7, "method": method, "params": map[string]any{"taskId": id}})
			if err := wire.Parse(&m, req); err != nil {
				t.Fatal(err)
			}
			var resp struct {
				Error *struct{ Code int } `json:"error"`
			}
			json.Unmarshal(one.ServeTasks(bob, &m, version, caps), &resp)
			if resp.Error == nil || resp.Error.Code != codeInvalidParams {
				t.Errorf("%s %s of alice's task by bob: %+v, want %d", version, method, resp.Error, codeInvalidParams)
			}
		}
		if got := one.tasks.ownedBy(callerID(bob), "srv"); len(got) != 0 {
			t.Errorf("bob owns %v", got)
		}
	}
	if got := one.tasks.ownedBy(callerID(alice), "srv"); len(got) != 1 || got["up-1"].version != "2025-11-25" {
		t.Errorf("alice owns %v, want her 2025-11-25 task (listed by tasks/list)", got)
	}
}

// TestTaskIDForm: ids of awkward servers and upstream ids round-trip, and
// are header-safe (SEP-2243's Mcp-Name carries them).
func TestTaskIDForm(t *testing.T) {
	t.Parallel()
	key := []byte("0123456789abcdef0123456789abcdef")
	for _, ref := range []taskRef{
		{"s", "2026-07-28", "x"},
		{"a server", "", "id with \"quotes\", \x00 and ünïcode"},
		{strings.Repeat("s", 300), "2025-11-25", strings.Repeat("u", 1000)},
	} {
		id := sealTask(key, "p", ref)
		for i := 0; i < len(id); i++ {
			if b := id[i]; b < 0x21 || b > 0x7e {
				t.Fatalf("id %q has byte %#x", id, b)
			}
		}
		if got, ok := openTask([][]byte{key}, "p", id); !ok || got != ref {
			t.Errorf("%+v: opened %+v %v", ref, got, ok)
		}
	}
}

// FuzzOpenTask: any id, for any principal, opens to a task only if it was
// sealed for that principal, and never panics; what is sealed opens to
// itself.
func FuzzOpenTask(f *testing.F) {
	key := []byte("0123456789abcdef0123456789abcdef")
	f.Add("mcpt-AAAA", "p", "s", "v", "u")
	f.Add(sealTask(key, "p", taskRef{"s", "2026-07-28", "u"}), "p", "s", "2026-07-28", "u")
	f.Add("mcpt-", "", "", "", "")
	f.Fuzz(func(t *testing.T, id, principal, server, version, upstream string) {
		if ref, ok := openTask([][]byte{key}, principal, id); ok {
			if sealTask(key, principal, ref) != id && !strings.Contains(id, "=") {
				// (An id that opens was sealed for principal: sealing
				// its task again gives the same id, but for base64's
				// non-canonical spellings.)
				if again, ok2 := openTask([][]byte{key}, principal, sealTask(key, principal, ref)); !ok2 || again != ref {
					t.Fatalf("opened %q to %+v, which does not seal back", id, ref)
				}
			}
			if ref.server == "" || ref.upstream == "" {
				t.Fatalf("opened %q to %+v", id, ref)
			}
		}
		if server == "" || upstream == "" {
			return
		}
		ref := taskRef{server, version, upstream}
		sealed := sealTask(key, principal, ref)
		if got, ok := openTask([][]byte{key}, principal, sealed); !ok || got != ref {
			t.Fatalf("%+v sealed to %q opened to %+v %v", ref, sealed, got, ok)
		}
		if _, ok := openTask([][]byte{key}, principal+"x", sealed); ok {
			t.Fatalf("%q opened for another principal", sealed)
		}
	})
}

// FuzzCarryTask: whatever tools/call a client sends, CarryTask gives back
// the line (no task parameter) or a JSON-RPC message whose params have no
// task member and whose _meta carries the task as it was sent.
func FuzzCarryTask(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","task":{"ttl":1},"_meta":{"progressToken":"p"}}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","task":{}}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","task":{},"_meta":null}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t"}}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		var m wire.Message
		if wire.Parse(&m, line) != nil {
			return
		}
		out, ok := CarryTask(&m, line)
		if !ok {
			if string(out) != string(line) {
				t.Fatalf("not carried, yet changed: %q", out)
			}
			return
		}
		var env struct {
			Params map[string]json.RawMessage `json:"params"`
		}
		if err := json.Unmarshal(out, &env); err != nil {
			t.Fatalf("%q: %v", out, err)
		}
		if _, ok := env.Params["task"]; ok {
			t.Fatalf("%q still has its task parameter", out)
		}
		var meta map[string]json.RawMessage
		if json.Unmarshal(env.Params["_meta"], &meta) != nil || meta[taskMetaKey] == nil {
			t.Fatalf("%q carries no task in _meta", out)
		}
	})
}
