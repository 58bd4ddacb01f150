package llmtools

import (
	"fmt"

	"github.com/mcphost/mcphost/host/registry"
)

// OpenAITool is a Chat Completions tool definition (Format OpenAI). strict
// is never set: strict mode needs every property required and no
// additional properties, which would change what the servers' schemas say.
type OpenAITool struct {
	// Type is always "function".
	Type string `json:"type"`
	// Function is the tool itself.
	Function OpenAIFunction `json:"function"`
}

// OpenAIFunction is the function of an OpenAITool.
type OpenAIFunction struct {
	// Name is the name the model calls the tool by (see Names).
	Name string `json:"name"`
	// Description is the registry's (sanitized, capped) description.
	Description string `json:"description,omitempty"`
	// Parameters is the processed input schema: an object schema.
	Parameters map[string]any `json:"parameters"`
}

// ResponsesTool is a Responses API function tool (Format OpenAIResponses).
type ResponsesTool struct {
	// Type is always "function".
	Type string `json:"type"`
	// Name is the name the model calls the tool by (see Names).
	Name string `json:"name"`
	// Description is the registry's (sanitized, capped) description.
	Description string `json:"description,omitempty"`
	// Parameters is the processed input schema: an object schema.
	Parameters map[string]any `json:"parameters"`
	// Strict is always false: the Responses API's default (true) enforces
	// structured-output rules the servers' schemas rarely meet.
	Strict bool `json:"strict"`
}

// AnthropicTool is a Messages API tool definition (Format Anthropic).
type AnthropicTool struct {
	// Name is the name the model calls the tool by (see Names).
	Name string `json:"name"`
	// Description is the registry's (sanitized, capped) description.
	Description string `json:"description,omitempty"`
	// InputSchema is the processed input schema: an object schema.
	InputSchema map[string]any `json:"input_schema"`
}

// GeminiTool is a Gemini API tool holding function declarations (Format
// Gemini). An export holds one, with every function.
type GeminiTool struct {
	// FunctionDeclarations are the exported tools.
	FunctionDeclarations []GeminiFunctionDeclaration `json:"functionDeclarations"`
}

// GeminiFunctionDeclaration is one function of a GeminiTool.
type GeminiFunctionDeclaration struct {
	// Name is the name the model calls the tool by (see Names).
	Name string `json:"name"`
	// Description is the registry's (sanitized, capped) description.
	Description string `json:"description,omitempty"`
	// Parameters is the input schema in Gemini's OpenAPI subset (an OBJECT
	// schema with properties), or nil for a tool without parameters:
	// Gemini refuses an object schema without properties.
	Parameters map[string]any `json:"parameters,omitempty"`
}

// Export is a tool list in one format, with what is needed to route the
// model's tool calls back. It is read-only once made and safe for
// concurrent use.
type Export struct {
	// Format is the format of Tools.
	Format Format
	// Tools is what the vendor's request takes as its tools, ready for
	// json.Marshal: []OpenAITool, []ResponsesTool, []AnthropicTool, or
	// []GeminiTool (one tool holding every function; none if there are no
	// tools), by Format. Tools are in the order given.
	Tools any
	// Names maps the names the vendor is given to registry names and back.
	Names *Names
	// Notes reports every change made to the tools' definitions (names,
	// schemas), tool by tool in the order given, after a note about the
	// whole export if it holds more tools than the vendor documents it
	// takes (OverLimit).
	Notes []Note

	wrapped map[string]bool // by registry name: the schema was wrapped (WrapProperty)
}

// Convert exports registry tools (from Host.Tools, for all active servers,
// or Host.ToolsOf, for chosen ones) as format f's tool definitions. Each
// tool's input schema is made acceptable to the vendor (see the package
// documentation); nothing that was changed goes unreported in Notes. Nil
// tools are skipped; a tool whose registry name came earlier in the list is
// left out (noted). The only error is ErrUnknownFormat.
func Convert(tools []*registry.Tool, f Format) (*Export, error) {
	if _, err := ParseFormat(string(f)); err != nil {
		return nil, err
	}
	e := &Export{Format: f, wrapped: map[string]bool{}}
	var kept []*registry.Tool
	seen := map[string]bool{}
	for _, t := range tools {
		switch {
		case t == nil:
		case seen[t.Name]:
			e.Notes = append(e.Notes, Note{Tool: t.Name, Change: Dropped,
				Detail: fmt.Sprintf("a tool named %q came earlier in the list; this one (server %q) is left out", t.Name, t.Server)})
		default:
			seen[t.Name] = true
			kept = append(kept, t)
		}
	}
	canonical := make([]string, len(kept))
	for i, t := range kept {
		canonical[i] = t.Name
	}
	if limit, ok := toolLimits[f]; ok && len(kept) > limit.n {
		e.Notes = append([]Note{{Change: OverLimit, Detail: fmt.Sprintf(
			"the export holds %d tools; %s documents at most %d %s, so it may refuse the request: send fewer (choose servers)",
			len(kept), limit.api, limit.n, limit.what)}}, e.Notes...)
	}
	names, renamed := newNames(f, canonical)
	e.Names = names
	e.Notes = append(e.Notes, renamed...)

	var (
		openai    []OpenAITool
		responses []ResponsesTool
		anthropic []AnthropicTool
		gemini    []GeminiFunctionDeclaration
	)
	for _, t := range kept {
		name, _ := names.Vendor(t.Name)
		schema, wrapped, notes := convertSchema(f, t.Name, t.InputSchema)
		e.wrapped[t.Name] = wrapped
		e.Notes = append(e.Notes, notes...)
		switch f {
		case OpenAI:
			openai = append(openai, OpenAITool{Type: "function", Function: OpenAIFunction{Name: name, Description: t.Description, Parameters: schema}})
		case OpenAIResponses:
			responses = append(responses, ResponsesTool{Type: "function", Name: name, Description: t.Description, Parameters: schema})
		case Anthropic:
			anthropic = append(anthropic, AnthropicTool{Name: name, Description: t.Description, InputSchema: schema})
		case Gemini:
			gemini = append(gemini, GeminiFunctionDeclaration{Name: name, Description: t.Description, Parameters: schema})
		}
	}
	switch f {
	case OpenAI:
		e.Tools = nonNil(openai)
	case OpenAIResponses:
		e.Tools = nonNil(responses)
	case Anthropic:
		e.Tools = nonNil(anthropic)
	case Gemini:
		gt := []GeminiTool{}
		if len(gemini) > 0 {
			gt = append(gt, GeminiTool{FunctionDeclarations: gemini})
		}
		e.Tools = gt
	}
	return e, nil
}

// toolLimits are the vendors' documented limits on the number of tools in
// one request, by format. An export over its format's limit is noted
// (OverLimit), not refused: the limits change, and a caller may send only
// some of the tools. Only documented limits are here: OpenAI's Chat
// Completions API documented "A max of 128 functions are supported" for
// its tools (openai-go before v2.0.0; the API refuses more with
// array_above_max_length), and google.golang.org/genai documents "Maximum
// 512 function declarations" for Gemini's Tool. No limit was found
// documented for the Responses API or Anthropic's Messages API.
var toolLimits = map[Format]struct {
	n         int
	api, what string
}{
	OpenAI: {128, "OpenAI Chat Completions", "tools in a request"},
	Gemini: {512, "Gemini", "function declarations in a tool"},
}

// nonNil makes an empty list marshal as [] rather than null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
