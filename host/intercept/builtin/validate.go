package builtin

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/hashicorp/go-hclog"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/intercept"
	"github.com/mcphost/mcphost/host/redact"
	"github.com/mcphost/mcphost/host/registry"
)

// CodeInvalidParams is the JSON-RPC error code of arguments that do not
// match the tool's inputSchema.
const CodeInvalidParams = -32602

// maxCauses is how many failing places a refusal names.
const maxCauses = 3

// maxLeaves bounds the failing places sorted to pick the maxCauses first.
const maxLeaves = 64

// maxSchemas bounds a validator's cache of compiled schemas (one per tool
// definition): past it the cache starts over.
const maxSchemas = 4096

// schemaURL is the resource URL a tool's schema is compiled under.
const schemaURL = "mem://tool"

var printer = message.NewPrinter(language.English)

// validator checks a tool call's arguments (input) or its result's
// structuredContent (output) against the tool's schema.
type validator struct {
	output bool
	log    hclog.Logger
	// schemas maps a tool definition (its fingerprint) to its compiled
	// *compiled.
	schemas sync.Map
	n       sync.Mutex // guards count
	count   int
}

// compiled is one tool definition's schema; schema nil: none, or one that
// does not compile (the tool is not checked).
type compiled struct {
	schema *jsonschema.Schema
}

func newValidate(ic *config.Interceptor, o options) (*intercept.Entry, error) {
	output := ic.Builtin == ValidateOutput
	phase := "request"
	if output {
		phase = "response"
	}
	if err := onlyToolsCall(ic, phase); err != nil {
		return nil, err
	}
	if ic.Action != "" {
		return nil, fmt.Errorf("interceptor %q: action is the secrets built-in's, not %q's: %w", ic.Name, ic.Builtin, intercept.ErrUnsupported)
	}
	v := &validator{output: output, log: o.log.Named(ic.Builtin)}
	return intercept.InterceptorEntry(ic, intercept.KindBuiltin, v)
}

// Check validates c's arguments (Request) or result (Response).
func (v *validator) Check(_ context.Context, c *intercept.Call, p intercept.Phase) (intercept.Verdict, error) {
	if c.Event != intercept.EventToolsCall || c.Tool == nil {
		return intercept.Verdict{}, nil
	}
	if v.output {
		if p != intercept.Response {
			return intercept.Verdict{}, nil
		}
		return v.checkOutput(c)
	}
	if p != intercept.Request {
		return intercept.Verdict{}, nil
	}
	return v.checkInput(c)
}

// checkInput validates the arguments: absent or null arguments are {}.
func (v *validator) checkInput(c *intercept.Call) (intercept.Verdict, error) {
	sch := v.schema(c.Tool, c.Tool.InputSchema)
	if sch == nil {
		return intercept.Verdict{}, nil
	}
	args := bytes.TrimSpace(c.Payload)
	var inst any = map[string]any{}
	if len(args) > 0 && !bytes.Equal(args, []byte("null")) {
		var err error
		if inst, err = jsonschema.UnmarshalJSON(bytes.NewReader(args)); err != nil {
			return intercept.Verdict{Action: intercept.Deny, Code: CodeInvalidParams,
				Reason: fmt.Sprintf("invalid arguments for %s: not JSON", c.Name)}, nil
		}
	}
	if err := sch.Validate(inst); err != nil {
		return intercept.Verdict{Action: intercept.Deny, Code: CodeInvalidParams,
			Reason: fmt.Sprintf("invalid arguments for %s: %s", c.Name, describe(err))}, nil
	}
	return intercept.Verdict{}, nil
}

// checkOutput validates a result's structuredContent: an error result, or
// a tool without outputSchema, is not checked; a missing
// structuredContent is invalid (the spec: a tool with an outputSchema
// must return one).
func (v *validator) checkOutput(c *intercept.Call) (intercept.Verdict, error) {
	if c.Err != nil || c.IsError || len(c.Payload) == 0 || c.Tool.OutputSchema == nil {
		return intercept.Verdict{}, nil
	}
	sch := v.schema(c.Tool, c.Tool.OutputSchema)
	if sch == nil {
		return intercept.Verdict{}, nil
	}
	var res struct {
		IsError           bool            `json:"isError"`
		StructuredContent json.RawMessage `json:"structuredContent"`
	}
	if err := json.Unmarshal(c.Payload, &res); err != nil {
		return deny(c, "the result is not a JSON object"), nil
	}
	if res.IsError {
		return intercept.Verdict{}, nil
	}
	if len(res.StructuredContent) == 0 || bytes.Equal(bytes.TrimSpace(res.StructuredContent), []byte("null")) {
		return deny(c, "structuredContent is missing"), nil
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(res.StructuredContent))
	if err != nil {
		return deny(c, "structuredContent is not JSON"), nil
	}
	if err := sch.Validate(inst); err != nil {
		return deny(c, describe(err)), nil
	}
	return intercept.Verdict{}, nil
}

func deny(c *intercept.Call, why string) intercept.Verdict {
	return intercept.Verdict{Action: intercept.Deny,
		Reason: fmt.Sprintf("output of %s does not match its outputSchema: %s", c.Name, why)}
}

// schema returns the compiled schema s of tool t, compiling it on first
// use; nil when s is absent or does not compile (logged once per
// definition: a broken upstream schema must not take the tool down).
func (v *validator) schema(t *registry.Tool, s any) *jsonschema.Schema {
	if s == nil {
		return nil
	}
	key := t.Fingerprint
	if key == "" {
		b, err := json.Marshal(s)
		if err != nil {
			return nil
		}
		sum := sha256.Sum256(b)
		key = hex.EncodeToString(sum[:])
	}
	if c, ok := v.schemas.Load(key); ok {
		return c.(*compiled).schema
	}
	sch, err := compileSchema(s)
	if err != nil {
		v.log.Warn("the tool's schema does not compile: its calls are not validated", "tool", t.Name, "error", redact.String(err.Error()))
	}
	v.n.Lock()
	if v.count >= maxSchemas {
		v.schemas.Clear()
		v.count = 0
	}
	if _, loaded := v.schemas.LoadOrStore(key, &compiled{schema: sch}); !loaded {
		v.count++
	}
	v.n.Unlock()
	return sch
}

// errNoLoad refuses every URL a schema refers to: no file or network $ref.
var errNoLoad = errors.New("schemas are not loaded from URLs")

type noLoader struct{}

func (noLoader) Load(string) (any, error) { return nil, errNoLoad }

// compileSchema compiles a tool's schema: JSON Schema 2020-12 unless its
// $schema says otherwise, no format assertion (for 2020-12 and 2019-09),
// nothing loaded from a URL.
func compileSchema(s any) (*jsonschema.Schema, error) {
	b, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(noLoader{})
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	sch, err := c.Compile(schemaURL)
	if err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	return sch, nil
}

// describe names up to maxCauses failing places of a validation error,
// in instance order: "at '/a/b': got string, want integer".
func describe(err error) string {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return "does not match the schema"
	}
	// The validator visits an object's properties in map order: sort the
	// leaves by place, so a refusal reads the same every time.
	var leaves []*jsonschema.ValidationError
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(leaves) >= maxLeaves {
			return
		}
		if len(e.Causes) == 0 {
			leaves = append(leaves, e)
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	slices.SortStableFunc(leaves, func(a, b *jsonschema.ValidationError) int {
		return slices.Compare(a.InstanceLocation, b.InstanceLocation)
	})
	parts := make([]string, 0, maxCauses)
	for _, l := range leaves[:min(len(leaves), maxCauses)] {
		msg := l.ErrorKind.LocalizedString(printer)
		if _, ok := l.ErrorKind.(*kind.FalseSchema); ok {
			msg = "not allowed" // "false schema": an extra property or item
		}
		parts = append(parts, fmt.Sprintf("at '%s': %s", pointer(l.InstanceLocation), msg))
	}
	return strings.Join(parts, "; ")
}

// pointer is the JSON Pointer of an instance location.
func pointer(loc []string) string {
	var b strings.Builder
	for _, tok := range loc {
		b.WriteByte('/')
		tok = strings.ReplaceAll(tok, "~", "~0")
		b.WriteString(strings.ReplaceAll(tok, "/", "~1"))
	}
	return b.String()
}
