package llmtools

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestFlatten(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		res  *mcp.CallToolResult
		want string
	}{
		{"nil", nil, ""},
		{"no content", &mcp.CallToolResult{}, ""},
		{"text", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "one"}, &mcp.TextContent{Text: "two\nlines"}}}, "one\ntwo\nlines"},
		{"media", &mcp.CallToolResult{Content: []mcp.Content{
			&mcp.ImageContent{MIMEType: "image/png", Data: []byte{1}},
			&mcp.AudioContent{MIMEType: "audio/wav", Data: []byte{2}},
		}}, "[Image: image/png]\n[Audio: audio/wav]"},
		{"resources", &mcp.CallToolResult{Content: []mcp.Content{
			&mcp.ResourceLink{URI: "file:///a.txt", Name: "a"},
			&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "demo://t", MIMEType: "text/plain", Text: "embedded text"}},
			&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "demo://b", MIMEType: "application/octet-stream", Blob: []byte{0, 1}}},
		}}, "[Resource: file:///a.txt]\nembedded text\n[Resource: demo://b]"},
		{"structured content without content", &mcp.CallToolResult{StructuredContent: map[string]any{"sum": 3}}, `{"sum":3}`},
		{"content wins over structured content", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: `{"sum": 3}`}}, StructuredContent: map[string]any{"sum": 3}}, `{"sum": 3}`},
		{"an error", &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "no such file"}}}, "Error: no such file"},
		{"an error without text", &mcp.CallToolResult{IsError: true}, "Error: the tool gave no details"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := Flatten(tc.res); got != tc.want {
				t.Errorf("Flatten = %q, want %q", got, tc.want)
			}
		})
	}
}
