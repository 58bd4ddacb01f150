package registry

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

func TestToolName(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 80)
	tests := []struct {
		server, tool, want string
	}{
		{"github", "create_issue", "mcp__github__create_issue"},
		{"my-server", "get.file", "mcp__my-server__get_file"},
		{"s", "a b/c:d", "mcp__s__a_b_c_d"},
		{"s", "naïve", "mcp__s__na_ve"},
		{"s", "zero\u200bwidth", "mcp__s__zerowidth"},
		{"s", "bidi\u202eevil", "mcp__s__bidievil"},
		{"s", "ｆｕｌｌ", "mcp__s__full"}, // NFKC folds full-width letters
		{"s", long, "mcp__s__" + strings.Repeat("x", 47) + "_" + "b9a1bd64"},
	}
	for _, tc := range tests {
		got := ToolName(tc.server, tc.tool)
		if tc.tool == long {
			// The hash suffix is checked for shape; its value is pinned by determinism below.
			if len(got) != MaxNameLen || !strings.HasPrefix(got, "mcp__s__xxxx") || got[MaxNameLen-9] != '_' {
				t.Errorf("ToolName(%q, long) = %q", tc.server, got)
			}
			continue
		}
		if got != tc.want {
			t.Errorf("ToolName(%q, %q) = %q, want %q", tc.server, tc.tool, got, tc.want)
		}
	}
}

func TestToolNameShorteningIsUniqueAndDeterministic(t *testing.T) {
	t.Parallel()
	seen := map[string]string{}
	for i := 0; i < 2000; i++ {
		tool := strings.Repeat("very_long_tool_name_", 4) + strings.Repeat("z", i%50) + string(rune('a'+i%26)) + strings.Repeat("q", i/26)
		got := ToolName("server", tool)
		if len(got) > MaxNameLen {
			t.Fatalf("%q is %d characters", got, len(got))
		}
		if got != ToolName("server", tool) {
			t.Fatalf("not deterministic for %q", tool)
		}
		if prev, dup := seen[got]; dup && prev != tool {
			t.Fatalf("%q and %q both shorten to %q", prev, tool, got)
		}
		seen[got] = tool
	}
}

func TestParseName(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, server, tool string
		ok                 bool
	}{
		{"mcp__github__create_issue", "github", "create_issue", true},
		{"mcp__a__b__c", "a", "b__c", true},
		{"mcp__a-b__c", "a-b", "c", true},
		{"mcp__a_b__c", "a_b", "c", true},
		{"mcp__github", "", "", false},
		{"mcp____x", "", "", false},
		{"github__x", "", "", false},
		{"mcp__a__", "", "", false},
	}
	for _, tc := range tests {
		s, tl, ok := ParseName(tc.name)
		if s != tc.server || tl != tc.tool || ok != tc.ok {
			t.Errorf("ParseName(%q) = %q, %q, %v; want %q, %q, %v", tc.name, s, tl, ok, tc.server, tc.tool, tc.ok)
		}
	}
}

func TestSanitize(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"plain text\nwith newline\tand tab", "plain text\nwith newline\tand tab"},
		{"bell\x07 and esc\x1b[31m", "bell and esc[31m"},
		{"rtl\u202eoverride\u202c", "rtloverride"},
		{"isolate\u2066x\u2069", "isolatex"},
		{"zw\u200b\u200c\u200d\ufeffj", "zwj"},
		{"tag\U000E0041\U000E0042s", "tags"},
		{"private\ue000use", "privateuse"},
		{"bad\xffutf8", "badutf8"},
		{"cr\r\nlf", "cr\nlf"},
	}
	for _, tc := range tests {
		if got := Sanitize(tc.in); got != tc.want {
			t.Errorf("Sanitize(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestCap(t *testing.T) {
	t.Parallel()
	s := strings.Repeat("é", MaxDescriptionLen+10)
	got := Cap(s, MaxDescriptionLen)
	if n := utf8.RuneCountInString(got); n != MaxDescriptionLen {
		t.Errorf("capped to %d characters, want %d", n, MaxDescriptionLen)
	}
	if !strings.HasSuffix(got, "…") {
		t.Error("cut not marked")
	}
	if diff := cmp.Diff("short", Cap("short", MaxDescriptionLen)); diff != "" {
		t.Error(diff)
	}
}

// FuzzToolName checks the naming invariants for any tool name and any valid
// server name: at most 64 characters from [a-zA-Z0-9_-], deterministic, and
// the server round-trips through ParseName.
func FuzzToolName(f *testing.F) {
	f.Add("github", "create_issue")
	f.Add("a", "b__c")
	f.Add("s", "\x00\xff{}")
	f.Add("my-server", strings.Repeat("long", 30))
	f.Add("x_y", "ſ K")
	f.Fuzz(func(t *testing.T, server, tool string) {
		if !validServer(server) || Normalize(tool) == "" {
			return
		}
		name := ToolName(server, tool)
		if len(name) > MaxNameLen {
			t.Fatalf("%q longer than %d", name, MaxNameLen)
		}
		for _, r := range name {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
				t.Fatalf("%q contains %q", name, r)
			}
		}
		if name != ToolName(server, tool) {
			t.Fatal("not deterministic")
		}
		s, _, ok := ParseName(name)
		if !ok || s != server {
			t.Fatalf("ParseName(%q) = %q, %v; want server %q", name, s, ok, server)
		}
	})
}

// validServer mirrors config.ValidServerName (the registry does not import config).
func validServer(s string) bool {
	if s == "" || len(s) > 40 {
		return false
	}
	prevSep := true
	for i, r := range s {
		alnum := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
		switch {
		case alnum:
			prevSep = false
		case (r == '_' || r == '-') && !prevSep && i < len(s)-1:
			prevSep = true
		default:
			return false
		}
	}
	return true
}

// FuzzSanitize: no panic, idempotent, and no control or format characters survive.
func FuzzSanitize(f *testing.F) {
	f.Add("hello\u202eworld")
	f.Add("\x00\xff{}")
	f.Add("ﬁ\u0301\U000E0041")
	f.Fuzz(func(t *testing.T, s string) {
		out := Sanitize(s)
		if !utf8.ValidString(out) {
			t.Fatalf("invalid UTF-8 from %q", s)
		}
		if again := Sanitize(out); again != out {
			t.Fatalf("not idempotent: %q -> %q -> %q", s, out, again)
		}
		for _, r := range out {
			if r < 0x20 && r != '\n' && r != '\t' || r == 0x7f || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069 || r == 0x200b || r == 0xfeff {
				t.Fatalf("%q survived in %q", r, out)
			}
		}
	})
}
