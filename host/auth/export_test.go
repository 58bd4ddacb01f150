package auth

import "net/http"

// SetTransport sends h's OAuth fetches (token requests) through rt: an
// authorization server in the test's process, which a synctest bubble can
// use where a loopback listener cannot be.
func SetTransport(h *Handler, rt http.RoundTripper) { h.client = &http.Client{Transport: rt} }
