package conn

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/host/config"
)

func TestChildEnv(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		goos    string
		host    map[string]string
		inherit []string
		file    map[string]string
		env     map[string]string
		want    []string
		absent  []string
	}{
		{
			name: "proxy and CA variables pass by default",
			goos: "linux",
			host: map[string]string{
				"PATH": "/bin", "HTTPS_PROXY": "http://proxy:3128", "https_proxy": "http://proxy:3128", "ALL_PROXY": "socks5://p", "no_proxy": "localhost",
				"NODE_EXTRA_CA_CERTS": "/etc/corp.pem", "SSL_CERT_FILE": "/etc/ca.pem", "SSL_CERT_DIR": "/etc/certs", "REQUESTS_CA_BUNDLE": "/r.pem",
				"CURL_CA_BUNDLE": "/c.pem", "PIP_CERT": "/p.pem", "GIT_SSL_CAINFO": "/g.pem", "AWS_SECRET_ACCESS_KEY": "leak",
			},
			want: []string{"PATH=/bin", "HTTPS_PROXY=http://proxy:3128", "https_proxy=http://proxy:3128", "ALL_PROXY=socks5://p", "no_proxy=localhost",
				"NODE_EXTRA_CA_CERTS=/etc/corp.pem", "SSL_CERT_FILE=/etc/ca.pem", "SSL_CERT_DIR=/etc/certs", "REQUESTS_CA_BUNDLE=/r.pem",
				"CURL_CA_BUNDLE=/c.pem", "PIP_CERT=/p.pem", "GIT_SSL_CAINFO=/g.pem"},
			absent: []string{"AWS_SECRET_ACCESS_KEY"},
		},
		{
			name: "what Windows needs to run npx",
			goos: "windows",
			host: map[string]string{"SystemRoot": `C:\Windows`, "APPDATA": `C:\u\AppData\Roaming`, "LOCALAPPDATA": `C:\u\AppData\Local`,
				"USERPROFILE": `C:\u`, "PATHEXT": ".COM;.EXE;.CMD", "ComSpec": `C:\Windows\system32\cmd.exe`, "TEMP": `C:\t`, "TMP": `C:\t`, "ProgramData": `C:\ProgramData`},
			want: []string{`SystemRoot=C:\Windows`, `APPDATA=C:\u\AppData\Roaming`, `LOCALAPPDATA=C:\u\AppData\Local`, `USERPROFILE=C:\u`,
				"PATHEXT=.COM;.EXE;.CMD", `ComSpec=C:\Windows\system32\cmd.exe`, `TEMP=C:\t`, `TMP=C:\t`, `ProgramData=C:\ProgramData`},
		},
		{
			// Windows looks names up case-insensitively: HTTPS_PROXY and
			// https_proxy are one variable there, passed once; env's
			// "Path" replaces the inherited PATH.
			name:    "Windows names are case-insensitive",
			goos:    "windows",
			host:    map[string]string{"PATH": `C:\bin`, "HTTPS_PROXY": "http://p", "https_proxy": "http://p", "WANTED": "1", "wanted": "1"},
			inherit: []string{"wanted"},
			env:     map[string]string{"Path": `C:\other`},
			want:    []string{`Path=C:\other`, "HTTPS_PROXY=http://p", "wanted=1"},
			absent:  []string{"PATH", "https_proxy", "WANTED"},
		},
		{
			name:    "inherit, then env_file, then env",
			goos:    "linux",
			host:    map[string]string{"A": "host", "B": "host", "C": "host"},
			inherit: []string{"A", "B", "C"},
			file:    map[string]string{"B": "file", "C": "file", "D": "file"},
			env:     map[string]string{"C": "env"},
			want:    []string{"A=host", "B=file", "C=env", "D=file"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lookup := func(k string) (string, bool) {
				if tc.goos == "windows" {
					for hk, v := range tc.host {
						if strings.EqualFold(hk, k) {
							return v, true
						}
					}
					return "", false
				}
				v, ok := tc.host[k]
				return v, ok
			}
			got := childEnv(tc.goos, lookup, tc.inherit, tc.file, tc.env)
			for _, w := range tc.want {
				if !slices.Contains(got, w) {
					t.Errorf("lacks %s: %q", w, got)
				}
			}
			for _, a := range tc.absent {
				for _, e := range got {
					if strings.HasPrefix(e, a+"=") {
						t.Errorf("has %s: %q", e, got)
					}
				}
			}
		})
	}
}

func TestNotPassed(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		goos     string
		environ  []string
		child    []string
		relevant []string
		others   int
	}{
		{
			name:     "relevant names first, the rest counted",
			goos:     "linux",
			environ:  []string{"PATH=/bin", "CORP_PROXY=x", "MY_CA=y", "NODE_OPTIONS=--z", "DB_CERT_PATH=/c", "EDITOR=vi", "GOPATH=/g", "LOCALAPPDATA_X=1"},
			child:    []string{"PATH=/bin"},
			relevant: []string{"CORP_PROXY", "DB_CERT_PATH", "MY_CA", "NODE_OPTIONS"},
			others:   3,
		},
		{
			name:     "Windows: a variable passed under another case was passed",
			goos:     "windows",
			environ:  []string{"Path=C:\\bin", "=C:=C:\\", "ALL_PROXY=s"},
			child:    []string{"PATH=C:\\bin"},
			relevant: []string{"ALL_PROXY"},
		},
		{
			name:    "everything passed",
			goos:    "linux",
			environ: []string{"A=1"},
			child:   []string{"A=1"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rel, others := notPassed(tc.goos, tc.environ, tc.child)
			if !slices.Equal(rel, tc.relevant) || others != tc.others {
				t.Errorf("got %q and %d others, want %q and %d", rel, others, tc.relevant, tc.others)
			}
		})
	}
}

// TestConnectTimeoutNamesVariablesNotPassed: a real process that never
// answers initialize (sleep) times out, and the error says which of the
// host's variables the server did not get — names only — and how to pass
// them.
func TestConnectTimeoutNamesVariablesNotPassed(t *testing.T) {
	t.Parallel()
	host := map[string]string{"PATH": os.Getenv("PATH"), "HTTPS_PROXY": "http://proxy.corp:3128", "CORP_PROXY_PAC": "http://pac.corp/secretpac",
		"NODE_OPTIONS": "--use-openssl-ca", "CORP_CA": "/etc/corp-ca.pem", "EDITOR": "vi", "API_TOKEN": "tok-s3cr3t-value"}
	lookup := func(k string) (string, bool) { v, ok := host[k]; return v, ok }
	environ := func() []string {
		var out []string
		for k, v := range host {
			out = append(out, k+"="+v)
		}
		return out
	}
	s := shell("silent", `exec sleep 300`)
	s.ConnectTimeout = 300 * time.Millisecond
	s.Origin.File = "/home/u/.config/mcphost/config.hcl"
	m := NewManager([]*config.Server{s}, &Options{LookupEnv: lookup, Environ: environ})
	defer m.Close()
	_, err := m.Session(context.Background(), "silent")
	var te *ConnectTimeoutError
	if !errors.As(err, &te) {
		t.Fatalf("err = %v (%T), want a *ConnectTimeoutError", err, err)
	}
	if want := []string{"CORP_CA", "CORP_PROXY_PAC", "NODE_OPTIONS"}; !te.Stdio || !slices.Equal(te.NotPassed, want) || te.Others != 2 || te.Timeout != 300*time.Millisecond {
		t.Errorf("got %+v, want NotPassed %q and 2 others", te, want)
	}
	if st := m.Status(); len(st) != 1 || !strings.Contains(st[0].Hint, "CORP_CA, CORP_PROXY_PAC, NODE_OPTIONS and 2 others") {
		t.Errorf("status hint: %+v", st)
	}
	// The error (which may reach a gateway's clients) names no variable;
	// the hint (the host's own displays) does, and says to edit the
	// existing server's inherit_env, never to `server add` it again.
	if got := err.Error(); got != "connecting to silent: connect timed out after 300ms" && !strings.HasSuffix(got, "connect timed out after 300ms") {
		t.Errorf("error = %q, want only the timeout", got)
	}
	for _, v := range []string{"CORP_CA", "inherit", "NODE_OPTIONS"} {
		if strings.Contains(err.Error(), v) {
			t.Errorf("error names %q: %q", v, err.Error())
		}
	}
	msg := te.Hint()
	for _, want := range []string{"CORP_CA, CORP_PROXY_PAC, NODE_OPTIONS and 2 others",
		`inherit_env = ["CORP_CA", "CORP_PROXY_PAC", "NODE_OPTIONS"]`, "/home/u/.config/mcphost/config.hcl", `server "silent"`,
		"for a new server: mcphost server add NEW-NAME --inherit-env CORP_CA,CORP_PROXY_PAC,NODE_OPTIONS"} {
		if !strings.Contains(msg, want) {
			t.Errorf("hint lacks %q:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "server add silent") {
		t.Errorf("hint suggests server add for the existing server:\n%s", msg)
	}
	for _, v := range host {
		if len(v) > 4 && strings.Contains(msg, v) {
			t.Errorf("error shows a value (%q):\n%s", v, msg)
		}
	}
	for _, passed := range []string{"HTTPS_PROXY", "EDITOR", "API_TOKEN"} {
		if strings.Contains(msg, passed) {
			t.Errorf("error names %s (passed, or not relevant):\n%s", passed, msg)
		}
	}
}

func TestEnvFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	envFile := filepath.Join(dir, "server.env")
	if err := os.WriteFile(envFile, []byte("# a comment\nexport FROM_FILE=one\nSHARED='file'\nQUOTED=\"a b\"\n\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "env")
	s := shell("envdump", `env > `+out+`; exit 1`)
	s.EnvFile = envFile
	s.Env = map[string]string{"SHARED": "env"}
	lookup := func(k string) (string, bool) { return map[string]string{"PATH": "/usr/bin:/bin"}[k], k == "PATH" }
	m := NewManager([]*config.Server{s}, &Options{LookupEnv: lookup})
	defer m.Close()
	m.Session(context.Background(), "envdump")
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"FROM_FILE=one", "SHARED=env", "QUOTED=a b"} {
		if !strings.Contains(string(b), want+"\n") {
			t.Errorf("child env lacks %s:\n%s", want, b)
		}
	}
}

func TestEnvFileErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.env")
	if err := os.WriteFile(bad, []byte("GOOD=1\nTOKEN=\"sk-live-s3cr3t\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	badName := filepath.Join(dir, "name.env")
	if err := os.WriteFile(badName, []byte("a.b=sk-live-s3cr3t\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, path string
		line       int
		want       []string
	}{
		{"missing", filepath.Join(dir, "nope.env"), 0, []string{"env_file " + filepath.Join(dir, "nope.env"), "no such file"}},
		{"a line that does not parse", bad, 2, []string{"env_file " + bad + ":2:", `unmatched "`}},
		{"an invalid name", badName, 0, []string{"invalid variable name", `"a.b"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := shell("srv", `exit 1`)
			s.EnvFile = tc.path
			m := NewManager([]*config.Server{s}, nil)
			defer m.Close()
			_, err := m.Session(context.Background(), "srv")
			var fe *EnvFileError
			if !errors.As(err, &fe) || fe.Path != tc.path || fe.Line != tc.line {
				t.Fatalf("err = %v (%T), want an *EnvFileError for %s line %d", err, err, tc.path, tc.line)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q: %v", w, err)
				}
			}
			if strings.Contains(err.Error(), "s3cr3t") {
				t.Errorf("error shows a value: %v", err)
			}
		})
	}
}

// FuzzEnvFile: the env_file parser never panics, returns only valid names,
// and its errors never quote the file (a value may be a secret).
func FuzzEnvFile(f *testing.F) {
	for _, s := range []string{"A=1\n", "export B='x y'\n# c\n", "C=\"unterminated\n", "D=\\u12\n", "=novalue\n", "1X=y\n", "a.b=c\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		vars, err := parseEnvFile("srv", "/x.env", strings.NewReader(s))
		if err != nil {
			var fe *EnvFileError
			if !errors.As(err, &fe) {
				t.Fatalf("%T: %v", err, err)
			}
			if !errors.Is(err, errEnvFileName) {
				for _, line := range strings.Split(s, "\n") {
					if _, v, ok := strings.Cut(line, "="); ok && len(v) >= 8 && strings.Contains(err.Error(), v) {
						t.Fatalf("error quotes a value %q: %v", v, err)
					}
				}
			}
			return
		}
		for k := range vars {
			if !config.ValidEnvName(k) {
				t.Fatalf("invalid name %q", k)
			}
		}
	})
}

// TestEnvListsAreNotShared: the lists of what every stdio server inherits
// are functions returning fresh slices: an importer that changes one it
// got cannot change what servers inherit.
func TestEnvListsAreNotShared(t *testing.T) {
	t.Parallel()
	for name, list := range map[string]func() []string{
		"SessionEnv": SessionEnv, "ProxyEnv": ProxyEnv, "CAEnv": CAEnv, "WindowsEnv": WindowsEnv, "BaseEnv": BaseEnv,
	} {
		got := list()
		if len(got) == 0 {
			t.Fatalf("%s is empty", name)
		}
		first := got[0]
		got[0] = "EVIL_INJECTED"
		_ = append(got[:1], "EVIL_APPENDED")
		if again := list(); again[0] != first || slices.Contains(again, "EVIL_INJECTED") || slices.Contains(again, "EVIL_APPENDED") {
			t.Errorf("%s: a caller's change reached the shared list: %q", name, again)
		}
	}
	child := childEnv("linux", func(k string) (string, bool) { return "v", k == "PATH" || k == "EVIL_INJECTED" }, nil, nil, nil)
	if slices.Contains(child, "EVIL_INJECTED=v") || !slices.Contains(child, "PATH=v") {
		t.Errorf("child env %q", child)
	}
}
