package oauthkit

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// FuzzCheckOAuthURL: the guard never accepts a URL whose literal host is a
// loopback or private address, however it is spelled, and never panics.
func FuzzCheckOAuthURL(f *testing.F) {
	for _, s := range []string{"https://example.com/x", "https://0x7f000001/", "https://127.1/", "https://[::ffff:10.0.0.1]/", "http://localhost/", "https://017700000001/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := url.Parse(raw)
		if err != nil {
			return
		}
		if CheckOAuthURL(u, false) != nil {
			return
		}
		if ip, ok := parseHostIP(u.Hostname()); ok && checkIP(ip, false) != nil {
			t.Fatalf("accepted %q with internal address %v", raw, ip)
		}
		if u.Scheme != "https" {
			t.Fatalf("accepted non-https %q", raw)
		}
	})
}

// FuzzParseTokenResponse: any answer from an authorization server yields a
// token or an error, never a panic, and errors never quote the body.
func FuzzParseTokenResponse(f *testing.F) {
	f.Add(200, `{"access_token":"a","token_type":"Bearer","expires_in":60}`)
	f.Add(400, `{"error":"invalid_grant","access_token":"SECRETBODY"}`)
	f.Add(200, `{"access_token":"SECRETBODY","expires_in":"x"}`)
	f.Fuzz(func(t *testing.T, status int, body string) {
		if status < 100 || status > 999 {
			return
		}
		resp := &http.Response{StatusCode: status, Header: http.Header{"Content-Type": {"application/json"}}}
		tok, err := ParseTokenResponse(resp, []byte(body))
		if err == nil && tok.AccessToken == "" {
			t.Fatal("a token without access_token")
		}
		if err == nil {
			return
		}
		var m map[string]any
		if json.Unmarshal([]byte(body), &m) != nil {
			return
		}
		secret, _ := m["access_token"].(string)
		if len(secret) < 6 {
			return
		}
		for _, k := range []string{"error", "error_description", "error_uri"} {
			if v, _ := m[k].(string); strings.Contains(v, secret) {
				return // the server put it in an error field itself
			}
		}
		if strings.Contains(err.Error(), secret) {
			t.Fatalf("error quotes the token: %v", err)
		}
	})
}
