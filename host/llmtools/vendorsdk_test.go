package llmtools

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/google/go-cmp/cmp"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
	"google.golang.org/genai"

	"github.com/mcphost/mcphost/host/registry"
)

// The vendors' own Go SDKs are the judges of the exports: every export
// must unmarshal into the SDK's request type for tools and marshal back
// to the same JSON (nothing the SDK does not know, nothing lost), and for
// Gemini the decoding is strict, so a field genai.Schema lacks fails.
// The SDKs are test-only dependencies: the mcphost binary does not link
// them (TestSDKsNotLinked).

// sdkTools are the tools exported in every format for the SDK checks: the
// schemas of testdata/schemas, the tables' schemas, and names the formats
// refuse.
func sdkTools(t *testing.T) []*registry.Tool {
	t.Helper()
	files, err := filepath.Glob("testdata/schemas/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no schemas in testdata/schemas: %v", err)
	}
	var tools []*registry.Tool
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		name := "mcp__s__" + strings.TrimSuffix(filepath.Base(f), ".json")
		tools = append(tools, &registry.Tool{Name: name, Server: "s", Description: "From " + filepath.Base(f) + ".", InputSchema: json.RawMessage(b)})
	}
	for _, tc := range schemaCases {
		tools = append(tools, &registry.Tool{Name: "mcp__table__" + registry.Normalize(tc.name), Server: "table", InputSchema: tc.schema})
	}
	tools = append(tools,
		&registry.Tool{Name: "9.starts-with-a-digit", InputSchema: map[string]any{"type": "object"}},
		&registry.Tool{Name: strings.Repeat("long", 30), InputSchema: nil},
		&registry.Tool{Name: "spaces and ünïcode", InputSchema: nil},
	)
	return tools
}

func TestVendorSDKsAcceptExports(t *testing.T) {
	t.Parallel()
	tools := sdkTools(t)
	for _, f := range Formats() {
		t.Run(string(f), func(t *testing.T) {
			t.Parallel()
			e, err := Convert(tools, f)
			if err != nil {
				t.Fatal(err)
			}
			out, err := json.Marshal(e.Tools)
			if err != nil {
				t.Fatal(err)
			}
			var back any
			switch f {
			case OpenAI:
				var sdk []openai.ChatCompletionToolUnionParam
				mustUnmarshal(t, out, &sdk)
				for i, tool := range sdk {
					if tool.OfFunction == nil || tool.OfFunction.Function.Name == "" {
						t.Errorf("tool %d is not read as a function tool: %s", i, mustMarshal(t, tool))
					}
				}
				back = sdk
			case OpenAIResponses:
				var sdk []responses.ToolUnionParam
				mustUnmarshal(t, out, &sdk)
				for i, tool := range sdk {
					if tool.OfFunction == nil || !tool.OfFunction.Strict.Valid() || tool.OfFunction.Strict.Value {
						t.Errorf("tool %d is not read as a non-strict function tool: %s", i, mustMarshal(t, tool))
					}
				}
				back = sdk
			case Anthropic:
				var sdk []anthropic.ToolUnionParam
				mustUnmarshal(t, out, &sdk)
				for i, tool := range sdk {
					if tool.OfTool == nil || tool.OfTool.Name == "" {
						t.Errorf("tool %d is not read as a custom tool: %s", i, mustMarshal(t, tool))
					}
				}
				back = sdk
			case Gemini:
				var sdk []*genai.Tool
				dec := json.NewDecoder(bytes.NewReader(out))
				dec.DisallowUnknownFields()
				if err := dec.Decode(&sdk); err != nil {
					t.Fatalf("genai refuses the export: %v", err)
				}
				if len(sdk) != 1 || len(sdk[0].FunctionDeclarations) != len(tools) {
					t.Fatalf("genai reads %d tools, want one holding %d functions", len(sdk), len(tools))
				}
				back = sdk
			}
			if diff := cmp.Diff(decodeJSON(t, out), decodeJSON(t, mustMarshal(t, back))); diff != "" {
				t.Errorf("the SDK's round trip changes the export (-export +sdk):\n%s", diff)
			}
		})
	}
}

func mustUnmarshal(t *testing.T, b []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("the SDK refuses the export: %v", err)
	}
}

func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func decodeJSON(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	return v
}
