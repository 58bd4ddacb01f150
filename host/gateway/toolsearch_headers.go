package gateway

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/conn"
	"github.com/mcphost/mcphost/host/registry"
	"github.com/mcphost/mcphost/internal/rawjson"
)

// Parameters sent as HTTP headers (x-mcp-header, SEP-2243). A tool's input
// schema may name parameters whose values a 2026-07-28 client also sends as
// Mcp-Param-NAME headers, for intermediaries (proxies, gateways, WAFs) to
// route or check on; the server must refuse a request whose headers do not
// match its body, or an intermediary could be shown one value and the tool
// given another. The go-sdk's streamable HTTP handler does so for a direct
// call of a served tool (that is why such calls are not relayed: exposure.
// headered). A call through call_tool carries the tool's arguments inside
// call_tool's own: checkParamHeaders holds them to the same rule, so that
// wrapping a call in call_tool is no way around it.

// checkParamHeaders checks the Mcp-Param-* headers of a call_tool request
// against the arguments it passes to t, as the go-sdk handler checks a
// direct call of t: only over HTTP at 2026-07-28 or later (no headers
// otherwise), only for the parameters t's input schema binds to headers. A
// parameter present (not null) needs its header, equal to its value; a
// header whose parameter is absent or null is refused. args passed the
// strict scan (unwrapArgs); the objects on a parameter's path are scanned
// as strictly. A mismatch is the go-sdk's protocol error
// (mcp.CodeHeaderMismatch).
func checkParamHeaders(req *mcp.CallToolRequest, t *registry.Tool, args []byte) error {
	if !t.HeaderParams || req.Extra == nil || req.Extra.Header == nil {
		return nil
	}
	h := req.Extra.Header
	if v := h.Get("Mcp-Protocol-Version"); v == "" || v < conn.NewProtocol {
		return nil
	}
	mismatch := func(format string, a ...any) error {
		return &jsonrpc.Error{Code: mcp.CodeHeaderMismatch, Message: fmt.Sprintf("header mismatch: %s (%s)", fmt.Sprintf(format, a...), t.Name) +
			"; the tool's input schema sends it as an HTTP header (x-mcp-header): a call through " + CallToolName + " must carry the header, as a direct call must"}
	}
	for _, b := range headerBindings(t.InputSchema) {
		header := "Mcp-Param-" + b.header
		path := strings.Join(b.path, ".")
		got := h.Get(header)
		raw, found, err := lookupStrict(args, b.path)
		if err != nil {
			return mismatch("the arguments on the path of parameter %q are refused: %v", path, argsRefusal(err))
		}
		if !found || string(raw) == "null" {
			if got != "" {
				return mismatch("unexpected %s header for absent or null parameter %q", header, path)
			}
			continue
		}
		if got == "" {
			return mismatch("missing %s header for parameter %q", header, path)
		}
		decoded, ok := decodeHeaderValue(got)
		if !ok {
			return mismatch("%s header contains invalid Base64 encoding", header)
		}
		val, ok := headerPrimitive(raw)
		if !ok {
			return mismatch("%s header present but parameter %q is not a string, an integer or a boolean", header, path)
		}
		if !primitiveEqual(decoded, val) {
			return mismatch("%s header value %q does not match parameter %q", header, got, path)
		}
	}
	return nil
}

// headerBinding is a (possibly nested) parameter sent as a header.
type headerBinding struct {
	path   []string
	header string
}

// headerSchema is what headerBindings reads of an input schema.
type headerSchema struct {
	XMCPHeader json.RawMessage         `json:"x-mcp-header,omitempty"`
	Properties map[string]headerSchema `json:"properties,omitempty"`
}

// headerBindings returns the parameters an input schema sends as headers,
// in path order (as the go-sdk reads them: x-mcp-header on any property,
// at any depth).
func headerBindings(schema any) []headerBinding {
	b, err := json.Marshal(schema)
	if err != nil {
		return nil
	}
	var s headerSchema
	if json.Unmarshal(b, &s) != nil {
		return nil
	}
	var out []headerBinding
	var walk func(props map[string]headerSchema, prefix []string)
	walk = func(props map[string]headerSchema, prefix []string) {
		for name, p := range props {
			path := append(slices.Clone(prefix), name)
			var header string
			if json.Unmarshal(p.XMCPHeader, &header) == nil && header != "" {
				out = append(out, headerBinding{path: path, header: header})
			}
			walk(p.Properties, path)
		}
	}
	walk(s.Properties, nil)
	slices.SortFunc(out, func(a, b headerBinding) int { return slices.Compare(a.path, b.path) })
	return out
}

// lookupStrict returns the value at path in the JSON object obj, scanning
// each object on the way with the strict scan.
func lookupStrict(obj []byte, path []string) ([]byte, bool, error) {
	cur := obj
	for _, key := range path {
		if len(cur) == 0 || cur[0] != '{' {
			return nil, false, nil
		}
		ms, err := rawjson.Members(nil, cur)
		if err != nil {
			return nil, false, err
		}
		m, ok := rawjson.Find(ms, key)
		if !ok {
			return nil, false, nil
		}
		cur = m.Value
	}
	return cur, true, nil
}

// The safe integer range of a float64 (as SEP-2243 bounds integers).
const (
	maxSafeInteger = 1<<53 - 1
	minSafeInteger = -(1<<53 - 1)
)

// headerPrimitive decodes a parameter's JSON value as SEP-2243 allows in a
// header: a string, a boolean, or an integer in the safe range.
func headerPrimitive(raw []byte) (any, bool) {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return nil, false
	}
	switch v := v.(type) {
	case string, bool:
		return v, true
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) || v != math.Trunc(v) || v < minSafeInteger || v > maxSafeInteger {
			return nil, false
		}
		return int64(v), true
	}
	return nil, false
}

// decodeHeaderValue decodes a header value, Base64-encoded if wrapped in
// =?base64?…?=.
func decodeHeaderValue(v string) (string, bool) {
	if enc, ok := strings.CutPrefix(v, "=?base64?"); ok {
		if enc, ok = strings.CutSuffix(enc, "?="); ok {
			b, err := base64.StdEncoding.DecodeString(enc)
			if err != nil {
				return "", false
			}
			return string(b), true
		}
	}
	return v, true
}

// primitiveEqual reports whether a decoded header value equals a
// parameter's value (headerPrimitive).
func primitiveEqual(header string, val any) bool {
	switch v := val.(type) {
	case int64:
		f, err := strconv.ParseFloat(header, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f != math.Trunc(f) || f < minSafeInteger || f > maxSafeInteger {
			return false
		}
		return int64(f) == v
	case bool:
		return header == strconv.FormatBool(v)
	case string:
		return header == v
	}
	return false
}
