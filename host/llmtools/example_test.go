package llmtools_test

import (
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/llmtools"
	"github.com/mcphost/mcphost/host/registry"
)

// Export two registry tools for Gemini, then map the model's calls back:
// one tool's schema is an ordinary object schema (with a format Gemini
// does not accept, which is dropped and reported), the other's is a
// string, wrapped as the property "input" and unwrapped again.
func ExampleConvert() {
	tools := []*registry.Tool{ // as Host.Tools returns them
		{
			Name: "mcp__weather__forecast", Server: "weather", Original: "forecast",
			Description: "Forecast for a city.",
			InputSchema: map[string]any{
				"type":       "object",
				"properties": map[string]any{"city": map[string]any{"type": "string", "format": "city"}},
				"required":   []any{"city"},
			},
		},
		{
			Name: "mcp__notes__append", Server: "notes", Original: "append",
			Description: "Appends a line to the notes.",
			InputSchema: map[string]any{"type": "string"},
		},
	}
	e, err := llmtools.Convert(tools, llmtools.Gemini)
	if err != nil {
		panic(err)
	}
	out, _ := json.MarshalIndent(e.Tools, "", "  ")
	fmt.Println(string(out))
	for _, n := range e.Notes {
		fmt.Println("note:", n)
	}

	// The model calls a tool by the name it was given.
	call, err := e.ToolCall("mcp__notes__append", json.RawMessage(`{"input": "buy milk"}`))
	if err != nil {
		panic(err)
	}
	fmt.Println(call.Name, string(call.Arguments)) // what Host.CallTool takes
	// Output:
	// [
	//   {
	//     "functionDeclarations": [
	//       {
	//         "name": "mcp__weather__forecast",
	//         "description": "Forecast for a city.",
	//         "parameters": {
	//           "properties": {
	//             "city": {
	//               "type": "STRING"
	//             }
	//           },
	//           "required": [
	//             "city"
	//           ],
	//           "type": "OBJECT"
	//         }
	//       },
	//       {
	//         "name": "mcp__notes__append",
	//         "description": "Appends a line to the notes.",
	//         "parameters": {
	//           "properties": {
	//             "input": {
	//               "type": "STRING"
	//             }
	//           },
	//           "required": [
	//             "input"
	//           ],
	//           "type": "OBJECT"
	//         }
	//       }
	//     ]
	//   }
	// ]
	// note: mcp__weather__forecast: #/properties/city/format: dropped: format "city": Gemini accepts only enum and date-time for type string
	// note: mcp__notes__append: #: rewritten: a schema of type "string" is not an object schema; wrapped as the property "input" of one (Export.ToolCall unwraps the model's arguments)
	// mcp__notes__append "buy milk"
}

// Names maps the names a vendor was given back to registry names; a name
// the vendor would refuse is replaced by a valid one.
func ExampleNames() {
	tools := []*registry.Tool{{Name: "mcp__files__read"}, {Name: "files.read v2"}}
	e, _ := llmtools.Convert(tools, llmtools.OpenAI)
	for _, t := range tools {
		vendor, _ := e.Names.Vendor(t.Name)
		canonical, _ := e.Names.Canonical(vendor)
		fmt.Printf("%s → %s → %s\n", t.Name, vendor, canonical)
	}
	// Output:
	// mcp__files__read → mcp__files__read → mcp__files__read
	// files.read v2 → files_read_v2_182b825c → files.read v2
}

// Flatten turns a result into text for a model: text as is, media as
// placeholders, and an error marked as one.
func ExampleFlatten() {
	res := &mcp.CallToolResult{
		IsError: true,
		Content: []mcp.Content{
			&mcp.TextContent{Text: "could not render the chart"},
			&mcp.ImageContent{MIMEType: "image/png", Data: []byte{0x89}},
		},
	}
	fmt.Println(llmtools.Flatten(res))
	fmt.Println(llmtools.Flatten(&mcp.CallToolResult{StructuredContent: map[string]int{"sum": 5}}))
	// Output:
	// Error: could not render the chart
	// [Image: image/png]
	// {"sum":5}
}
