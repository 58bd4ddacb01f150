package llmtools

import (
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host"
)

// ErrorPrefix starts the text Flatten makes of a result whose isError is
// set, so that a model reading the text knows the call failed.
const ErrorPrefix = "Error: "

// Flatten turns a tool's result into text for callers that pass results to
// a model as a string. The content is flattened as host.TextOf does, one
// item a line:
//
//   - text as it is;
//   - an image or audio as [Image: MIME] or [Audio: MIME];
//   - a resource link as [Resource: URI];
//   - an embedded resource as its text, or [Resource: URI] for a blob.
//
// A result without content gives its structuredContent as compact JSON. The
// text of a result whose isError is set starts with ErrorPrefix (and says
// "the tool gave no details" if it is empty); res.IsError remains the way
// for code to tell. A nil result is "".
func Flatten(res *mcp.CallToolResult) string {
	if res == nil {
		return ""
	}
	text := host.TextOf(res.Content)
	if len(res.Content) == 0 && res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			text = string(b)
		}
	}
	if res.IsError {
		if text == "" {
			text = "the tool gave no details"
		}
		text = ErrorPrefix + text
	}
	return text
}
