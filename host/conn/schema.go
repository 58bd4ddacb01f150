package conn

import (
	"encoding/json"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A server's elicitation/create names the form it asks for in
// requestedSchema. The go-sdk client checks that schema against its own
// reading of the spec before any handler runs, and refuses what it reads
// otherwise — e.g. a titled multi-select whose items say "type": "string"
// next to their anyOf, as go-sdk's own reference server sends. A gateway
// that refused such a request would hide it from a client that can answer
// it (as that client does when it talks to the server directly). So the
// schema is moved out of the go-sdk's sight when the request is read, into
// _meta under schemaKey, and put back in the handler (restoreSchema); the
// answer is then checked against it here, as the go-sdk would have
// (checkContent; a schema that cannot be read or resolved, which the go-sdk
// would have refused, lets the answer pass unchecked). The client that
// fills the form is the judge of the schema itself.

// schemaKey is the _meta member that carries an elicitation's schema from
// the read loop to the handler. A server's own value is always removed.
const schemaKey = "dev.mcphost/requestedSchema"

// hideSchema returns an elicitation/create request with its requestedSchema
// moved into _meta[schemaKey] (changed: a new message). Params that are not
// a JSON object are returned as they are (for the go-sdk to refuse).
func hideSchema(req *jsonrpc.Request) (out *jsonrpc.Request, changed bool) {
	params, ok := editParams(req.Params, func(obj, meta map[string]json.RawMessage) (changed, ok bool) {
		schema, hasSchema := obj["requestedSchema"]
		if _, hasMeta := obj["_meta"]; !hasSchema && !hasMeta {
			return false, true
		}
		var mode string
		if raw, found := obj["mode"]; found && json.Unmarshal(raw, &mode) != nil {
			return false, false
		}
		delete(meta, schemaKey)
		// Only a form's schema is moved: the go-sdk refuses a URL
		// elicitation that has one, as it should.
		if hasSchema && (mode == "" || mode == "form") {
			delete(obj, "requestedSchema")
			if string(schema) != "null" {
				meta[schemaKey] = schema
			}
		}
		return true, true
	})
	if !ok || len(params) == len(req.Params) && string(params) == string(req.Params) {
		return req, false
	}
	cp := *req
	cp.Params = params
	return &cp, true
}

// restoreSchema puts a schema hideSchema moved back into p (a form's only).
func restoreSchema(p *mcp.ElicitParams) {
	v, ok := p.Meta[schemaKey]
	if !ok {
		return
	}
	delete(p.Meta, schemaKey)
	if len(p.Meta) == 0 {
		p.Meta = nil
	}
	if p.Mode == "" || p.Mode == "form" {
		p.RequestedSchema = v
	}
}

// checkContent checks an accepted answer against the schema it was asked
// with and fills in the schema's defaults, as the go-sdk client does.
func checkContent(p *mcp.ElicitParams, res *mcp.ElicitResult) error {
	if res == nil || res.Action != "accept" || res.Content == nil || p.RequestedSchema == nil {
		return nil
	}
	b, err := json.Marshal(p.RequestedSchema)
	if err != nil {
		return nil
	}
	var s jsonschema.Schema
	if json.Unmarshal(b, &s) != nil {
		return nil // not a schema this client can read: the answer goes as it is
	}
	resolved, err := s.Resolve(nil)
	if err != nil {
		return nil
	}
	if err := resolved.Validate(res.Content); err != nil {
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("elicitation result content does not match requested schema: %v", err)}
	}
	if err := resolved.ApplyDefaults(&res.Content); err != nil {
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("failed to apply schema defaults to elicitation result: %v", err)}
	}
	return nil
}
