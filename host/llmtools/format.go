package llmtools

import (
	"errors"
	"fmt"
	"strings"
)

// Format names an LLM vendor's tool definition format.
type Format string

// The formats Convert writes.
const (
	// OpenAI is the Chat Completions API's tools list:
	// {"type":"function","function":{"name","description","parameters"}}.
	OpenAI Format = "openai"
	// OpenAIResponses is the Responses API's function tools:
	// {"type":"function","name","description","parameters","strict":false}.
	// strict is written false because the Responses API otherwise enforces
	// structured-output rules the servers' schemas rarely meet.
	OpenAIResponses Format = "openai-responses"
	// Anthropic is the Messages API's tools list:
	// {"name","description","input_schema"}.
	Anthropic Format = "anthropic"
	// Gemini is the Gemini API's tools list: one tool holding every
	// function, [{"functionDeclarations":[{"name","description","parameters"}]}],
	// with parameters in the OpenAPI 3.0 subset Gemini accepts.
	Gemini Format = "gemini"
)

// ErrUnknownFormat is returned for a format that is not one of Formats.
var ErrUnknownFormat = errors.New("unknown tool format")

// Formats returns every format, in the order help texts list them.
func Formats() []Format { return []Format{OpenAI, OpenAIResponses, Anthropic, Gemini} }

// ParseFormat returns the format named s. An unknown name is an
// ErrUnknownFormat whose message lists the allowed values.
func ParseFormat(s string) (Format, error) {
	for _, f := range Formats() {
		if string(f) == s {
			return f, nil
		}
	}
	names := make([]string, 0, len(Formats()))
	for _, f := range Formats() {
		names = append(names, string(f))
	}
	return "", fmt.Errorf("%w %q: use one of %s", ErrUnknownFormat, s, strings.Join(names, ", "))
}

// gemini reports whether f needs the Gemini schema subset.
func (f Format) gemini() bool { return f == Gemini }
