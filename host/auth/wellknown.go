package auth

import (
	"bytes"
	"io"
	"mime"
	"net/http"
	"strings"
)

// wellKnownJSON returns the body of a successful JSON answer to a GET of a
// well-known metadata document, leaving resp's body readable again. The
// DPoP transport reads authorization server metadata with it as it passes.
func wellKnownJSON(req *http.Request, resp *http.Response, err error) ([]byte, bool) {
	if err != nil || req.Method != http.MethodGet || resp.StatusCode != http.StatusOK || !strings.Contains(req.URL.Path, "/.well-known/") {
		return nil, false
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "application/json" {
		return nil, false
	}
	b, rerr := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(b))
	return b, rerr == nil
}
