package auth

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

func TestCallbackOneShot(t *testing.T) {
	cb, err := listenCallback(0)
	if err != nil {
		t.Fatal(err)
	}
	defer cb.close()
	if !strings.HasPrefix(cb.RedirectURL(), "http://127.0.0.1:") {
		t.Fatalf("redirect URL %s is not on 127.0.0.1", cb.RedirectURL())
	}
	cb.expect("good-state", "https://as.example", false)
	get := func(q string) int {
		resp, err := http.Get(cb.RedirectURL() + "?" + q)
		if err != nil {
			return 0 // closed after use
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if c := get("code=x&state=wrong"); c != http.StatusBadRequest {
		t.Errorf("wrong state: %d, want 400", c)
	}
	if c := get("code=x&state=good-state"); c != http.StatusOK {
		t.Errorf("good callback: %d", c)
	}
	res, err := cb.wait(context.Background())
	if err != nil || res.Code != "x" {
		t.Fatalf("wait = %v, %v", res, err)
	}
	if c := get("code=y&state=good-state"); c == http.StatusOK {
		t.Errorf("replayed callback accepted")
	}
}

// TestCallbackChecksIss (RFC 9207, SECURITY.md A4): an answer with the
// right state from another issuer, or without iss from an issuer that
// advertises it, gets a 4xx and ends the flow with ErrIssuerResponse; its
// code is never handed on (so no token request follows).
func TestCallbackChecksIss(t *testing.T) {
	t.Parallel()
	const issuer = "https://as.example"
	for _, tc := range []struct {
		name        string
		issRequired bool
		query       url.Values
		wantStatus  int
		wantErr     error
	}{
		{"matching iss", true, url.Values{"iss": {issuer}}, http.StatusOK, nil},
		{"no iss, not advertised", false, url.Values{}, http.StatusOK, nil},
		{"wrong iss", true, url.Values{"iss": {"https://evil.example"}}, http.StatusBadRequest, ErrIssuerResponse},
		{"wrong iss, not advertised", false, url.Values{"iss": {"https://evil.example"}}, http.StatusBadRequest, ErrIssuerResponse},
		{"trailing slash", true, url.Values{"iss": {issuer + "/"}}, http.StatusBadRequest, ErrIssuerResponse},
		{"missing iss, advertised", true, url.Values{}, http.StatusBadRequest, ErrIssuerResponse},
		{"empty iss", true, url.Values{"iss": {""}}, http.StatusBadRequest, ErrIssuerResponse},
		{"two iss", true, url.Values{"iss": {issuer, "https://evil.example"}}, http.StatusBadRequest, ErrIssuerResponse},
		{"wrong iss on an error answer", true, url.Values{"iss": {"https://evil.example"}, "error": {"access_denied"}}, http.StatusBadRequest, ErrIssuerResponse},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cb, err := listenCallback(0)
			if err != nil {
				t.Fatal(err)
			}
			defer cb.close()
			cb.expect("s1", issuer, tc.issRequired)
			q := tc.query
			q.Set("state", "s1")
			if q.Get("error") == "" {
				q.Set("code", "the-code")
			}
			resp, err := http.Get(cb.RedirectURL() + "?" + q.Encode())
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.wantStatus {
				t.Errorf("status %d, want %d", resp.StatusCode, tc.wantStatus)
			}
			res, err := cb.wait(context.Background())
			if !errors.Is(err, tc.wantErr) {
				t.Errorf("wait error = %v, want %v", err, tc.wantErr)
			}
			if tc.wantErr != nil && res != nil {
				t.Errorf("the code was handed on: %+v", res)
			}
		})
	}
}
