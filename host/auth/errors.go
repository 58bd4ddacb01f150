package auth

import (
	"errors"
	"fmt"
)

// Errors of a login, to test with errors.Is. Discovery failures are
// classified by the sentinels of sdk/oauthkit (ErrBlockedAddress,
// ErrIssuerMismatch, ErrPKCENotSupported, ErrNoAuthServerMetadata,
// ErrResourceMismatch, ErrInvalidMetadata); an unsafe authorization URL
// wraps ErrUnsafeURL.
var (
	// ErrIssuerResponse: the authorization response carried an iss other
	// than the authorization server's issuer, or none although the server
	// advertises it (RFC 9207): a mix-up, so the code is not redeemed.
	ErrIssuerResponse = errors.New("the authorization response is not from the expected issuer (RFC 9207)")
	// ErrAuthorizationDenied: the authorization server answered the
	// authorization request with an error (e.g. the user denied access).
	ErrAuthorizationDenied = errors.New("the authorization server refused the authorization")
	// ErrLoginTimeout: nobody completed the browser login in time.
	ErrLoginTimeout = errors.New("the login was not completed in time")
	// ErrCredentialsRefused: the server refused the token a login had just
	// obtained.
	ErrCredentialsRefused = errors.New("the server refused the new credentials")
)

// FlowError is a failed attempt to obtain credentials for a server:
// discovery, metadata validation, registration, the browser login, or the
// token request. Err says what failed; it never holds a token or a
// response body.
type FlowError struct {
	Server string
	Err    error
}

// Error describes the failure.
func (e *FlowError) Error() string { return fmt.Sprintf("authorizing %s: %v", e.Server, e.Err) }

// Unwrap returns the cause.
func (e *FlowError) Unwrap() error { return e.Err }
