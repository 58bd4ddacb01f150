package redact

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/go-hclog"
)

// Canary secrets: realistic shapes, each unique, so a test can grep any
// output for them.
const (
	canaryGHP      = "ghp_CANARYa1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6"
	canaryGHO      = "gho_CANARYoauthAAAABBBBCCCCDDDD"
	canaryGHS      = "ghs_CANARYserverAAAABBBBCCCCDDDD"
	canaryGHU      = "ghu_CANARYuserAAAABBBBCCCCDDDD"
	canaryGHR      = "ghr_CANARYrefreshAAAABBBBCCCC"
	canaryPAT      = "github_pat_11CANARY0abcdefghij_KLMNOPQRSTUVWXYZ0123456789"
	canaryOpenAI   = "sk-proj-CANARYopenaiAAAABBBBCCCC1234"
	canaryOpenAI2  = "sk-CANARYlegacyAAAABBBBCCCCDDDD"
	canaryAnth     = "sk-ant-api03-CANARYanthropic_AAAA-BBBB1234"
	canarySlackBot = "xoxb-1234567890-CANARYslackbot"
	canarySlackUsr = "xoxp-1234567890-CANARYslackusr"
	canarySlackApp = "xoxa-2-CANARYslackapp"
	canarySlackRef = "xoxr-CANARYslackrefresh"
	canarySlackLeg = "xoxs-CANARYslacklegacy"
	canaryJWT      = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJDQU5BUlkifQ.CANARYsig_-abc"
	canaryAWS      = "AKIACANARY0123456789"
	canaryPassword = "hunter2"
)

func TestString(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, in, want string }{
		// Escaped JSON inside a log line, non-Bearer schemes, several cookies.
		{"escaped json", `msg="{\"access_token\":\"zq81secret\",\"n\":1}"`, `msg="{\"access_token\":\"` + Mask + `\",\"n\":1}"`},
		{"token scheme", "Authorization: Token zq81secret", "Authorization: " + Mask},
		{"quoted token scheme", `{"Authorization": "Token zq81secret", "n": 1}`, `{"Authorization": "` + Mask + `", "n": 1}`},
		{"cookies", "Cookie: a=1; sid=zq81secret", "Cookie: " + Mask},
		// Known token shapes, anywhere in a line.
		{"github classic", "cloning with " + canaryGHP + " now", "cloning with " + Mask + " now"},
		{"github oauth", "t=" + canaryGHO, "t=" + Mask},
		{"github server", canaryGHS, Mask},
		{"github user", "(" + canaryGHU + ")", "(" + Mask + ")"},
		{"github refresh", canaryGHR + ".", Mask + "."},
		{"github fine-grained", "pat " + canaryPAT, "pat " + Mask},
		{"openai project key", "OPENAI " + canaryOpenAI, "OPENAI " + Mask},
		{"openai legacy key", "key " + canaryOpenAI2 + "!", "key " + Mask + "!"},
		{"anthropic key", "x-key: " + canaryAnth, "x-key: " + Mask},
		{"slack bot", canarySlackBot, Mask},
		{"slack user", "slack " + canarySlackUsr, "slack " + Mask},
		{"slack app", canarySlackApp, Mask},
		{"slack refresh", canarySlackRef, Mask},
		{"slack legacy", canarySlackLeg, Mask},
		{"jwt", "id_token is " + canaryJWT + " ok", "id_token is " + Mask + " ok"},
		{"aws key id", "AWS " + canaryAWS, "AWS " + Mask},
		{"pem private key", "key: -----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY----- done", "key: " + Mask + " done"},
		{"url credentials", "dialing https://bob:" + canaryPassword + "@db.example/x", "dialing https://bob:" + Mask + "@db.example/x"},

		// Named fields.
		{"token=", "token=" + canaryGHP, "token=" + Mask},
		{"token= opaque", "login ok token=opaque-CANARY-123", "login ok token=" + Mask},
		{"env token", "GITHUB_TOKEN=CANARYenv123 started", "GITHUB_TOKEN=" + Mask + " started"},
		{"password=", "db: password=" + canaryPassword, "db: password=" + Mask},
		{"password with spaces", "password = " + canaryPassword, "password = " + Mask},
		{"numeric password", "PIN password=123456", "PIN password=" + Mask},
		{"json password with space", `{"password": "hunter 2"}`, `{"password": "` + Mask + `"}`},
		{"db_password", "DB_PASSWORD='s3cr et'", "DB_PASSWORD='" + Mask + "'"},
		{"Authorization header", "Authorization: Bearer eyJhbGciOi.abc-def_ghi", "Authorization: Bearer " + Mask},
		{"authorization json", `{"authorization":"Basic dXNlcjpwYXNz"}`, `{"authorization":"` + Mask + `"}`},
		{"bearer in text", "got bearer s3cr3t-TOKEN from helper", "got bearer " + Mask + " from helper"},
		{"oauth token response", `{"access_token":"at-1","refresh_token":"rt-2","expires_in":3600}`, `{"access_token":"` + Mask + `","refresh_token":"` + Mask + `","expires_in":3600}`},
		{"code in callback", "https://as/callback?code=AUTHCODE&state=xyz", "https://as/callback?code=" + Mask + "&state=xyz"},
		{"code in json", `{"code":"AUTHCODE","state":"s"}`, `{"code":"` + Mask + `","state":"s"}`},
		{"secret and verifier", "client_secret=hunter2 code_verifier=abc", "client_secret=" + Mask + " code_verifier=" + Mask},
		{"cookie", "Cookie: sid=1; other=2", "Cookie: " + Mask},
		{"session id", "Mcp-Session-Id: 0123456789abcdef", "Mcp-Session-Id: " + Mask},
		{"api key", "x-api-key=abc123", "x-api-key=" + Mask},

		// Not secrets: must survive intact.
		{"grpc status", "rpc error: code = Unavailable desc = connection error: desc = \"transport: Error while dialing\"", "rpc error: code = Unavailable desc = connection error: desc = \"transport: Error while dialing\""},
		{"jsonrpc error code", `{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"invalid request"}}`, `{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"invalid request"}}`},
		{"exit code", "server exited: exit code=1", "server exited: exit code=1"},
		{"url", "connected to wss://example.com/mcp", "connected to wss://example.com/mcp"},
		{"word code", "decoding the code path", "decoding the code path"},
		{"max tokens", "max_tokens=4096 tokens: 12", "max_tokens=4096 tokens: 12"},
		{"token type", `{"token_type":"Bearer","expires_in":3600}`, `{"token_type":"Bearer","expires_in":3600}`},
		{"task name", "running task-list-for-the-sk-project", "running task-list-for-the-sk-project"},
		{"mask is stable", "token=" + Mask, "token=" + Mask},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tc.want, String(tc.in)); diff != "" {
				t.Errorf("String(%q) (-want +got):\n%s", tc.in, diff)
			}
			if diff := cmp.Diff(String(tc.want), tc.want); diff != "" {
				t.Errorf("not idempotent (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLoggerScrubsMessagesArgsAndChildren(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	l := Logger(hclog.New(&hclog.LoggerOptions{Output: &buf, Level: hclog.Trace}))
	l.Named("plugin.x").With("password", "pw1").Error("token refresh failed: Bearer abc123",
		"refresh_token", "rt-secret", "url", "https://x/cb?code=c0de", "err", errors.New("client_secret=s3"))
	out := buf.String()
	for _, secret := range []string{"pw1", "abc123", "rt-secret", "c0de", "s3\n", "=s3 "} {
		if strings.Contains(out, secret) {
			t.Errorf("log contains %q:\n%s", secret, out)
		}
	}
	if !strings.Contains(out, "plugin.x") || !strings.Contains(out, Mask) {
		t.Errorf("log lost its shape:\n%s", out)
	}
}

func TestErrorKeepsTheChain(t *testing.T) {
	t.Parallel()
	base := errors.New("server said password=" + canaryPassword)
	err := Error(fmt.Errorf("calling x: %w", base))
	if strings.Contains(err.Error(), canaryPassword) || !errors.Is(err, base) {
		t.Errorf("Error() = %q, Is = %v", err, errors.Is(err, base))
	}
	if Error(nil) != nil {
		t.Error("Error(nil) != nil")
	}
}
