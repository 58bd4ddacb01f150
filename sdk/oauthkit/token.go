package oauthkit

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	"golang.org/x/oauth2"
)

// tokenResponse is an RFC 6749 §5.1 token response.
type tokenResponse struct {
	AccessToken  string      `json:"access_token"`
	TokenType    string      `json:"token_type"`
	RefreshToken string      `json:"refresh_token"`
	ExpiresIn    json.Number `json:"expires_in"`
}

// ClientAuth is how a client authenticates at the token endpoint.
type ClientAuth struct {
	ClientID     string
	ClientSecret string
	Style        oauth2.AuthStyle // AuthStyleInHeader (basic) or AuthStyleInParams (post, or none without a secret)
	// Assertion, if set, returns a fresh private_key_jwt client assertion
	// for the given token endpoint.
	Assertion func(tokenURL string) (string, error)
}

// PostToken sends one token-endpoint request (any grant) and parses the
// answer. x/oauth2 has no way to add parameters such as RFC 8707 resource
// to a refresh or to send private_key_jwt, so these requests are built here;
// the result is an oauth2.Token, and errors are *oauth2.RetrieveError as
// x/oauth2 returns them (the go-sdk's transport looks for invalid_grant).
// The response body is never quoted in errors beyond the RFC 6749 error
// fields, so a token cannot leak into a message.
func PostToken(ctx context.Context, client *http.Client, tokenURL string, form url.Values, ca ClientAuth) (*oauth2.Token, error) {
	form = CloneValues(form)
	if ca.Assertion != nil {
		a, err := ca.Assertion(tokenURL)
		if err != nil {
			return nil, err
		}
		form.Set("client_id", ca.ClientID)
		form.Set("client_assertion_type", "urn:ietf:params:oauth:client-assertion-type:jwt-bearer")
		form.Set("client_assertion", a)
		ca = ClientAuth{} // the assertion authenticates the client
	}
	req, err := NewFormRequest(ctx, tokenURL, form, ca)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("token request to %s: %w", RedactURL(tokenURL), err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("token response from %s: %w", RedactURL(tokenURL), err)
	}
	return ParseTokenResponse(resp, body)
}

// NewFormRequest builds a form POST to an OAuth endpoint (token or
// revocation) authenticated as ca: HTTP Basic for client_secret_basic with a
// secret, else client_id (and client_secret for client_secret_post) in the
// form. It does not modify form.
func NewFormRequest(ctx context.Context, endpoint string, form url.Values, ca ClientAuth) (*http.Request, error) {
	basic := ca.Style == oauth2.AuthStyleInHeader && ca.ClientSecret != ""
	if ca.ClientID != "" && !basic {
		form = CloneValues(form)
		form.Set("client_id", ca.ClientID)
		if ca.ClientSecret != "" {
			form.Set("client_secret", ca.ClientSecret)
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if basic {
		req.SetBasicAuth(url.QueryEscape(ca.ClientID), url.QueryEscape(ca.ClientSecret))
	}
	return req, nil
}

func ParseTokenResponse(resp *http.Response, body []byte) (*oauth2.Token, error) {
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		var e struct {
			Error       string `json:"error"`
			Description string `json:"error_description"`
			URI         string `json:"error_uri"`
		}
		json.Unmarshal(body, &e)
		// Body is kept out of the error: only the RFC 6749 §5.2 fields.
		return nil, &oauth2.RetrieveError{Response: resp, ErrorCode: e.Error, ErrorDescription: e.Description, ErrorURI: e.URI}
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "" && mt != "application/json" {
		return nil, fmt.Errorf("token response has content type %q, want application/json", mt)
	}
	var tr tokenResponse
	if err := json.Unmarshal(body, &tr); err != nil {
		return nil, fmt.Errorf("token response is not valid JSON")
	}
	if tr.AccessToken == "" {
		return nil, fmt.Errorf("token response has no access_token")
	}
	tok := &oauth2.Token{AccessToken: tr.AccessToken, TokenType: tr.TokenType, RefreshToken: tr.RefreshToken}
	if n, err := tr.ExpiresIn.Int64(); err == nil && n > 0 {
		tok.Expiry = time.Now().Add(time.Duration(n) * time.Second)
		tok.ExpiresIn = n
	}
	var raw map[string]any
	json.Unmarshal(body, &raw)
	return tok.WithExtra(raw), nil
}

func CloneValues(v url.Values) url.Values {
	out := url.Values{}
	for k, vs := range v {
		out[k] = append([]string(nil), vs...)
	}
	return out
}

// RedactURL drops the query and user info of a URL for messages.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(invalid URL)"
	}
	u.User, u.RawQuery, u.Fragment = nil, "", ""
	return u.String()
}

// ScopesOf returns the scopes a token was granted (its "scope" field), or nil.
func ScopesOf(tok *oauth2.Token) []string {
	if s, ok := tok.Extra("scope").(string); ok && s != "" {
		return strings.Fields(s)
	}
	return nil
}
