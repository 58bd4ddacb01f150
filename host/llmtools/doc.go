// Package llmtools exports the tools of the unified registry as the tool
// definitions of LLM APIs — OpenAI Chat Completions and Responses,
// Anthropic Messages, Gemini — and maps the models' tool calls back to the
// registry, so that a program can put mcphost's tools in front of a model
// and run what the model asks for:
//
//	tools, problems := h.Tools(ctx) // or h.ToolsOf(ctx, servers)
//	e, err := llmtools.Convert(tools, llmtools.Anthropic)
//	// send e.Tools with the request; log e.Notes; for each tool call:
//	call, err := e.ToolCall(name, input)
//	res, err := h.CallTool(ctx, call.Name, call.Arguments, nil)
//	text := llmtools.Flatten(res)
//
// # Schemas
//
// Servers write JSON Schema; the vendors accept less of it. Every format
// needs an object schema at the top, so an input schema is processed
// first as a whole (SPEC §10):
//
//   - none, {}, true, or not a JSON object: an empty object schema;
//   - an object schema (type "object", or no type and nothing that makes
//     it something else): its type, properties, required and description,
//     plus, but for Gemini, additionalProperties, $schema and the $defs
//     and definitions its references need; a $ref or allOf at the top is
//     inlined or merged first;
//   - anything else (type "string", anyOf at the top, …): wrapped as the
//     single property WrapProperty ("input") of an object schema, which
//     Export.ToolCall unwraps.
//
// Inside, OpenAI and Anthropic get the schema as the server wrote it, but
// for references and, for OpenAI, arrays without items (given "items":
// {}). Every $ref they are given resolves within the exported schema: one
// that resolves nowhere in the server's schema is dropped, and one into a
// part the export leaves out (a top-level keyword it drops, an allOf it
// merges) is inlined. Gemini gets the OpenAPI 3.0 subset of
// google.golang.org/genai's Schema type (see gemini.go): $ref inlined
// (recursion bounded), oneOf as anyOf, const as enum, type lists as
// nullable or anyOf, and every keyword it does not accept dropped. A
// Gemini tool without parameters has none (Gemini refuses empty ones).
//
// Schemas come from servers and are not trusted: nesting, reference
// chains and the work of a conversion are bounded, and so is its size:
// each tool's converted schema is at most 1 MiB of JSON, or twice the
// server's schema if that is larger. Every inlined copy is charged its
// size; a reference that does not fit is replaced by a plain schema of its
// target's type, and a schema still over the cap by a plain object
// schema. Every change that can alter what the model is told or may send
// is reported as a Note, with the JSON pointer of the construct in the
// server's schema; the text of notes is escaped (controls, bidi and other
// invisible characters), so that a server cannot use them to hide or
// reorder what a terminal shows.
//
// # Tool counts
//
// An export holding more tools than the vendor documents it takes in one
// request — OpenAI Chat Completions 128, Gemini 512 function declarations
// — gets a Note of Change OverLimit, first; no tool is left out. No limit
// is documented for the Responses API or Anthropic's Messages API.
//
// # Names
//
// Registry names (mcp__SERVER__TOOL) are valid in every format. A name a
// format refuses (OpenAI, Anthropic: [a-zA-Z0-9_-]{1,64}; Gemini: a letter
// or underscore, then [a-zA-Z0-9_.:-], at most 64) is replaced by a valid,
// unique one ending in a hash of the original; Names maps both ways.
package llmtools
