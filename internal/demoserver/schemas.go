package demoserver

import (
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// schemaTools are the tools of -schemas: input schemas that use what LLM
// vendors' tool formats restrict or refuse ($ref and $defs, recursion,
// oneOf, anyOf, allOf, enum, const, type lists with null, nested objects,
// arrays of objects, and schemas that are not object schemas at all), for
// the tests of the tool format adapters (host/llmtools). Each tool answers
// with the arguments it was called with, as JSON text.
var schemaTools = []struct{ name, description, schema string }{
	{"schema_refs", "Takes an address by reference and a recursive tree.", `{
		"type": "object",
		"properties": {
			"home": {"$ref": "#/$defs/Address"},
			"tree": {"$ref": "#/$defs/Node"}
		},
		"required": ["home"],
		"$defs": {
			"Address": {"type": "object", "properties": {"street": {"type": "string"}, "zip": {"type": "string"}}, "required": ["street"]},
			"Node": {"type": "object", "properties": {"value": {"type": "string"}, "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}}}
		}
	}`},
	{"schema_choice", "Looks a user up by id or by email (oneOf at the top).", `{
		"oneOf": [
			{"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"]},
			{"type": "object", "properties": {"email": {"type": "string", "format": "email"}}, "required": ["email"]}
		]
	}`},
	{"schema_enums", "Takes enums, a const, a nullable string and an anyOf.", `{
		"type": "object",
		"properties": {
			"color": {"type": "string", "enum": ["red", "green", "blue"]},
			"level": {"type": "integer", "enum": [1, 2, 3]},
			"mode": {"const": "fast"},
			"note": {"type": ["string", "null"]},
			"id": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
			"pet": {"allOf": [{"$ref": "#/$defs/Named"}, {"properties": {"barks": {"type": "boolean"}}}]}
		},
		"required": ["color"],
		"$defs": {"Named": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}}
	}`},
	{"schema_nested", "Takes nested objects and an array of objects.", `{
		"type": "object",
		"additionalProperties": false,
		"properties": {
			"user": {
				"type": "object",
				"properties": {
					"name": {"type": "string", "minLength": 1, "default": "anon"},
					"email": {"type": "string", "format": "email"}
				},
				"required": ["name"]
			},
			"items": {
				"type": "array",
				"items": {"type": "object", "properties": {"sku": {"type": "string"}, "qty": {"type": "integer", "minimum": 1}}, "required": ["sku"]}
			},
			"tags": {"type": "array"}
		}
	}`},
	{"schema_empty", "Takes no arguments (an empty schema).", `{}`},
	{"schema_text", "Takes a string (a schema that is not an object schema).", `{"type": "string", "description": "The text."}`},
}

// addSchemaTools adds schemaTools. The go-sdk refuses to add a tool whose
// schema is not of type object, so those are added with an object schema
// and given their own in the tools/list answer.
func addSchemaTools(s *mcp.Server, count func(string)) {
	listed := map[string]json.RawMessage{}
	for _, st := range schemaTools {
		schema := json.RawMessage(st.schema)
		var probe struct{ Type any }
		if json.Unmarshal(schema, &probe) != nil || probe.Type != "object" {
			listed[st.name] = schema
			schema = json.RawMessage(`{"type": "object"}`)
		}
		name := st.name
		s.AddTool(&mcp.Tool{Name: name, Description: st.description, InputSchema: schema},
			func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				count(name)
				args := string(req.Params.Arguments)
				if args == "" {
					args = "null"
				}
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "arguments: " + args}}}, nil
			})
	}
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			lr, ok := res.(*mcp.ListToolsResult)
			if err != nil || method != "tools/list" || !ok {
				return res, err
			}
			out := *lr
			out.Tools = make([]*mcp.Tool, len(lr.Tools))
			for i, t := range lr.Tools {
				out.Tools[i] = t
				if schema, ok := listed[t.Name]; ok {
					c := *t
					c.InputSchema = schema
					out.Tools[i] = &c
				}
			}
			return &out, nil
		}
	})
}
