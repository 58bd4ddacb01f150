package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/mail"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	hauth "github.com/mcphost/mcphost/host/auth"
	"github.com/mcphost/mcphost/host/registry"
)

// Keywords accepted at every elicitation prompt (compared without case).
// A field cannot take one of them as its value.
const (
	kwDecline = ":decline" // refuse the request (action "decline")
	kwCancel  = ":cancel"  // dismiss it without a choice (action "cancel"); so does Ctrl-D
	kwSkip    = ":skip"    // leave an optional field out, even if it has a default or an earlier answer
)

// The outcomes of a prompt other than an answer.
var (
	errDeclined  = errors.New("declined")
	errCancelled = errors.New("cancelled")
)

// codeSamplingRefused is the error code the MCP specification gives a
// client's refusal of a sampling request ("User rejected sampling request").
const codeSamplingRefused = -1

// elicitOnTerminal answers a server's elicitation request at the terminal
// (host.Options.OnElicit; installed only when stdin and stderr are terminals).
//
// A form (Params.Mode "" or "form") is asked field by field, then the
// answers are shown and sent only when the user says so (they may edit them
// first). Fields are asked in the order of the schema's properties as
// mcphost receives them: the SDK decodes a request's schema into a Go map,
// so that order is alphabetical unless the schema arrives as raw JSON.
//
// A URL request (Mode "url") shows the message and the URL and opens the URL
// in a browser only if the user agrees. Accept then means what the MCP
// specification makes it mean in URL mode: the user consented to open the
// page. The interaction itself happens in the browser, out of band; the
// server learns its end on its own (and may send
// notifications/elicitation/complete).
//
// At any prompt, :decline refuses the request and :cancel (or Ctrl-D)
// dismisses it. When ctx ends, the prompt gives up at once with ctx's error
// (see prompt.go for what happens to the read under way).
func (a *app) elicitOnTerminal(ctx context.Context, server string, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	if req == nil || req.Params == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "elicitation request without params"}
	}
	p := req.Params
	var ask func() (*mcp.ElicitResult, error)
	switch p.Mode {
	case "", "form":
		fields, err := parseForm(p.RequestedSchema)
		if err != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "mcphost cannot show this form: " + err.Error()}
		}
		ask = func() (*mcp.ElicitResult, error) { return a.askForm(ctx, server, p.Message, fields) }
	case "url":
		// Only https (or http to loopback), only URI characters: what the
		// user is shown is what opens, with no look-alike Unicode.
		if err := hauth.CheckAuthorizationURL(p.URL); err != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "mcphost will not open this URL: " + err.Error()}
		}
		ask = func() (*mcp.ElicitResult, error) { return a.askURL(ctx, server, p.Message, p.URL) }
	default:
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unsupported elicitation mode %q", p.Mode)}
	}
	release, err := a.takeTurn(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	res, err := ask()
	switch {
	case errors.Is(err, errDeclined):
		fmt.Fprintf(a.stderr, "Declined.\n\n")
		return &mcp.ElicitResult{Action: "decline"}, nil
	case errors.Is(err, errCancelled):
		fmt.Fprintf(a.stderr, "Cancelled.\n\n")
		return &mcp.ElicitResult{Action: "cancel"}, nil
	case err != nil && ctx.Err() != nil:
		a.abandoned(err)
	}
	return res, err
}

// answer reads the answer to the prompt just shown, trimmed, and turns the
// keywords and Ctrl-D into errDeclined and errCancelled.
func (a *app) answer(ctx context.Context) (string, error) {
	line, err := a.readLine(ctx)
	if errors.Is(err, io.EOF) {
		fmt.Fprintln(a.stderr) // Ctrl-D leaves the cursor after the prompt
		return "", errCancelled
	}
	if err != nil {
		return "", err
	}
	line = strings.TrimSpace(line)
	switch {
	case strings.EqualFold(line, kwDecline):
		return "", errDeclined
	case strings.EqualFold(line, kwCancel):
		return "", errCancelled
	}
	return line, nil
}

func (a *app) askForm(ctx context.Context, server, message string, fields []*formField) (*mcp.ElicitResult, error) {
	w := a.stderr
	fmt.Fprintf(w, "\n%s asks for input:\n", cleanLine(server))
	quote(w, message)
	if len(fields) > 0 {
		fmt.Fprintf(w, "Enter takes the [default], or leaves an optional field out (%s always leaves it out).\n", kwSkip)
	}
	fmt.Fprintf(w, "%s refuses; %s or Ctrl-D dismisses. Your answers go to %s: never type passwords or tokens here.\n", kwDecline, kwCancel, cleanLine(server))
	content := map[string]any{}
	for {
		for _, f := range fields {
			v, ok, err := a.askField(ctx, f, content)
			if err != nil {
				return nil, err
			}
			if ok {
				content[f.name] = v
			} else {
				delete(content, f.name)
			}
		}
		question, choices := "Send", "[Y]es / [e]dit / [d]ecline / [c]ancel"
		if len(fields) == 0 {
			// A bare confirmation: no default answer.
			question, choices = "Accept", "[y]es / [d]ecline / [c]ancel"
		} else {
			fmt.Fprintf(w, "\nSend to %s:\n", cleanLine(server))
			if len(content) == 0 {
				fmt.Fprintln(w, "  (no answers)")
			}
			for _, f := range fields {
				if v, ok := content[f.name]; ok {
					fmt.Fprintf(w, "  %s: %s\n", f.title, f.show(v))
				}
			}
		}
	review:
		for {
			fmt.Fprintf(w, "%s? %s: ", question, choices)
			line, err := a.answer(ctx)
			if err != nil {
				return nil, err
			}
			switch strings.ToLower(line) {
			case "y", "yes":
				return &mcp.ElicitResult{Action: "accept", Content: content}, nil
			case "":
				if len(fields) > 0 {
					return &mcp.ElicitResult{Action: "accept", Content: content}, nil
				}
			case "e", "edit":
				if len(fields) > 0 {
					fmt.Fprintln(w, "\nEnter keeps an answer.")
					break review
				}
			case "d", "decline", "n", "no":
				return nil, errDeclined
			case "c", "cancel":
				return nil, errCancelled
			}
			fmt.Fprintf(w, "  Answer with one of %s.\n", choices)
		}
	}
}

// askField asks for one field until the answer is valid. It returns the
// typed value, or ok false to leave the field out. A field's earlier answer
// (when editing) stands in for its default.
func (a *app) askField(ctx context.Context, f *formField, current map[string]any) (v any, ok bool, err error) {
	w := a.stderr
	def, hasDef := f.def, f.def != nil
	if v, ok := current[f.name]; ok {
		def, hasDef = v, true
	}
	notes := f.hint()
	if f.required {
		notes = "required; " + notes
	}
	fmt.Fprintf(w, "\n%s (%s)\n", f.title, notes)
	if f.desc != "" {
		quote(w, f.desc)
	}
	for i, o := range f.options {
		fmt.Fprintf(w, "  %d) %s\n", i+1, o.display())
	}
	for {
		if hasDef {
			fmt.Fprintf(w, "[%s] > ", f.show(def))
		} else {
			fmt.Fprint(w, "> ")
		}
		line, err := a.answer(ctx)
		if err != nil {
			return nil, false, err
		}
		skip := strings.EqualFold(line, kwSkip)
		switch {
		case line == "" && hasDef:
			return def, true, nil
		case (line == "" || skip) && !f.required:
			return nil, false, nil
		case line == "" || skip:
			fmt.Fprintln(w, "  This field is required.")
			continue
		}
		v, err := f.parse(line)
		if err != nil {
			fmt.Fprintf(w, "  %s; try again.\n", err)
			continue
		}
		return v, true, nil
	}
}

func (a *app) askURL(ctx context.Context, server, message, u string) (*mcp.ElicitResult, error) {
	w := a.stderr
	site := u
	if pu, err := url.Parse(u); err == nil {
		site = pu.Host
	}
	fmt.Fprintf(w, "\n%s asks you to open a web page:\n", cleanLine(server))
	quote(w, message)
	fmt.Fprintf(w, "  URL:  %s\n  Site: %s\n", u, site)
	fmt.Fprintf(w, "Open it in your browser? [y/N] (%s or Ctrl-D dismisses) ", kwCancel)
	line, err := a.answer(ctx)
	if err != nil {
		return nil, err
	}
	if l := strings.ToLower(line); l != "y" && l != "yes" {
		return nil, errDeclined
	}
	if err := a.openBrowser(u); err != nil {
		fmt.Fprintf(w, "Could not open a browser (%v); open the URL yourself.\n\n", err)
	} else {
		fmt.Fprintf(w, "Opened; continue in your browser.\n\n")
	}
	return &mcp.ElicitResult{Action: "accept"}, nil
}

// declineSampling answers a server's sampling request
// (host.Options.OnCreateMessage) with an error that says why the CLI cannot
// sample and what to use instead. The SDK sends a handler's *jsonrpc.Error
// to the server as it is (a plain error would go out with code 0); the code
// is the one the MCP specification gives a refused sampling request.
func (a *app) declineSampling(_ context.Context, server string, _ *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	fmt.Fprintf(a.stderr, "warning: %s asked for an LLM completion (sampling); the CLI has none and declined\n", cleanLine(server))
	return nil, &jsonrpc.Error{Code: codeSamplingRefused, Message: fmt.Sprintf(
		"mcphost's CLI does not sample: server %s asked for an LLM completion (sampling/createMessage), which needs an LLM client; "+
			"use mcphost serve behind an MCP client that supports sampling", server)}
}

// Display of server text.

// ansiSeq matches terminal escape sequences (CSI, OSC, DCS/SOS/PM/APC and
// two-character escapes), removed whole before the control characters are:
// registry.Sanitize alone would leave "[31m" behind.
var ansiSeq = regexp.MustCompile(`\x1b(?:\[[0-?]*[ -/]*[@-~]?|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[PX^_][^\x1b]*(?:\x1b\\)?|[ -/]*[0-~]?)`)

// cleanText makes server text safe to print: no escape sequences, no
// control or invisible characters other than newline and tab.
func cleanText(s string) string {
	return registry.Sanitize(ansiSeq.ReplaceAllString(s, ""))
}

// cleanLine is cleanText on one line, capped.
func cleanLine(s string) string {
	s = strings.Join(strings.Fields(cleanText(s)), " ")
	return registry.Cap(s, 200)
}

// quote prints server text, each line marked as the server's words.
func quote(w io.Writer, s string) {
	s = strings.TrimSpace(cleanText(s))
	if s == "" {
		return
	}
	for _, l := range strings.Split(s, "\n") {
		fmt.Fprintf(w, "  | %s\n", strings.ReplaceAll(l, "\t", "    "))
	}
}

// Forms.

type fieldKind int

const (
	kindString fieldKind = iota
	kindNumber
	kindInteger
	kindBool
	kindEnum  // a string among options
	kindMulti // strings among options
)

// formField is one property of an elicitation form.
type formField struct {
	name        string // the property name: the content key
	title, desc string // display, cleaned; title is the name if the schema has none
	required    bool
	kind        fieldKind
	format      string // kindString: "", email, uri, date, date-time

	minLen, maxLen     *int     // kindString, in characters
	min, max           *float64 // kindNumber, kindInteger
	minItems, maxItems *int     // kindMulti
	options            []option // kindEnum, kindMulti

	def any // the valid default, typed like an answer, or nil
}

type option struct {
	value string // exact, sent back
	shown string // value, cleaned
	label string // title or enumName, cleaned; may be empty
}

func (o option) display() string {
	if o.label == "" || o.label == o.shown {
		return o.shown
	}
	return o.label + " (" + o.shown + ")"
}

// schemaProp is the JSON of a property of an elicitation schema: the
// primitive types the MCP specification allows (which the SDK checked).
type schemaProp struct {
	Type        string          `json:"type"`
	Title       string          `json:"title"`
	Description string          `json:"description"`
	Format      string          `json:"format"`
	MinLength   *int            `json:"minLength"`
	MaxLength   *int            `json:"maxLength"`
	Minimum     *float64        `json:"minimum"`
	Maximum     *float64        `json:"maximum"`
	Enum        []any           `json:"enum"`
	EnumNames   []string        `json:"enumNames"` // legacy titles of enum
	OneOf       []titledConst   `json:"oneOf"`     // titled single choice
	AnyOf       []titledConst   `json:"anyOf"`     // titled multiple choice (in items)
	Items       *schemaProp     `json:"items"`
	MinItems    *int            `json:"minItems"`
	MaxItems    *int            `json:"maxItems"`
	Default     json.RawMessage `json:"default"`
}

type titledConst struct {
	Const any    `json:"const"`
	Title string `json:"title"`
}

// parseForm reads an elicitation schema (a flat object schema, as any value
// that marshals to one) into its fields, in the order of its properties.
func parseForm(schema any) ([]*formField, error) {
	if schema == nil {
		return nil, nil
	}
	b, err := json.Marshal(schema)
	if err != nil {
		return nil, err
	}
	var top struct {
		Type       string          `json:"type"`
		Properties json.RawMessage `json:"properties"`
		Required   []string        `json:"required"`
	}
	if err := json.Unmarshal(b, &top); err != nil {
		return nil, err
	}
	if top.Type != "" && top.Type != "object" {
		return nil, fmt.Errorf("the schema is of type %q, not object", top.Type)
	}
	if len(top.Properties) == 0 || string(top.Properties) == "null" {
		return nil, nil
	}
	names, err := objectKeys(top.Properties)
	if err != nil {
		return nil, err
	}
	var props map[string]*schemaProp
	if err := json.Unmarshal(top.Properties, &props); err != nil {
		return nil, err
	}
	required := map[string]bool{}
	for _, n := range top.Required {
		required[n] = true
	}
	var fields []*formField
	for _, n := range names {
		p := props[n]
		if p == nil {
			continue
		}
		f, err := newField(n, p, required[n])
		if err != nil {
			return nil, fmt.Errorf("field %q: %w", n, err)
		}
		fields = append(fields, f)
	}
	return fields, nil
}

// objectKeys returns the keys of a JSON object in order, once each.
func objectKeys(raw json.RawMessage) ([]string, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errors.New("properties is not an object")
	}
	var keys []string
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		k, _ := tok.(string)
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil, err
		}
		if !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	return keys, nil
}

func newField(name string, p *schemaProp, required bool) (*formField, error) {
	f := &formField{name: name, title: cleanLine(p.Title), desc: p.Description, required: required}
	if f.title == "" {
		f.title = cleanLine(name)
	}
	var err error
	switch {
	case (p.Type == "string" || p.Type == "") && len(p.Enum) > 0:
		f.kind = kindEnum
		f.options, err = enumOptions(p.Enum, p.EnumNames)
	case (p.Type == "string" || p.Type == "") && len(p.OneOf) > 0:
		f.kind = kindEnum
		f.options, err = titledOptions(p.OneOf)
	case p.Type == "string":
		f.kind, f.format, f.minLen, f.maxLen = kindString, p.Format, p.MinLength, p.MaxLength
		switch f.format {
		case "", "email", "uri", "date", "date-time":
		default:
			return nil, fmt.Errorf("unsupported format %q", f.format)
		}
	case p.Type == "number":
		f.kind, f.min, f.max = kindNumber, p.Minimum, p.Maximum
	case p.Type == "integer":
		f.kind, f.min, f.max = kindInteger, p.Minimum, p.Maximum
	case p.Type == "boolean":
		f.kind = kindBool
	case p.Type == "array":
		f.kind, f.minItems, f.maxItems = kindMulti, p.MinItems, p.MaxItems
		switch it := p.Items; {
		case it == nil:
			return nil, errors.New("an array without items")
		case len(it.Enum) > 0:
			f.options, err = enumOptions(it.Enum, it.EnumNames)
		case len(it.AnyOf) > 0:
			f.options, err = titledOptions(it.AnyOf)
		case len(it.OneOf) > 0:
			f.options, err = titledOptions(it.OneOf)
		default:
			return nil, errors.New("an array whose items are not a set of choices")
		}
	default:
		return nil, fmt.Errorf("unsupported type %q", p.Type)
	}
	if err != nil {
		return nil, err
	}
	if len(p.Default) > 0 && string(p.Default) != "null" {
		// A default that does not fit the field is not offered.
		if v, err := f.decode(p.Default); err == nil && f.validate(v) == nil {
			f.def = v
		}
	}
	return f, nil
}

func enumOptions(values []any, names []string) ([]option, error) {
	opts := make([]option, len(values))
	for i, v := range values {
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("choice %v is not a string", v)
		}
		opts[i] = option{value: s, shown: cleanLine(s)}
		if len(names) == len(values) {
			opts[i].label = cleanLine(names[i])
		}
	}
	return opts, nil
}

func titledOptions(entries []titledConst) ([]option, error) {
	opts := make([]option, len(entries))
	for i, e := range entries {
		s, ok := e.Const.(string)
		if !ok {
			return nil, fmt.Errorf("choice %v is not a string", e.Const)
		}
		opts[i] = option{value: s, shown: cleanLine(s), label: cleanLine(e.Title)}
	}
	return opts, nil
}

// decode reads a JSON default as the field's answer type.
func (f *formField) decode(raw json.RawMessage) (any, error) {
	switch f.kind {
	case kindNumber, kindInteger:
		var n float64
		if err := json.Unmarshal(raw, &n); err != nil {
			return nil, err
		}
		if f.kind == kindNumber {
			return n, nil
		}
		if n != math.Trunc(n) || math.Abs(n) > 1<<53 {
			return nil, errors.New("not a whole number")
		}
		return int(n), nil
	case kindBool:
		var b bool
		err := json.Unmarshal(raw, &b)
		return b, err
	case kindMulti:
		var ss []string
		err := json.Unmarshal(raw, &ss)
		return ss, err
	default:
		var s string
		err := json.Unmarshal(raw, &s)
		return s, err
	}
}

// parse reads an answer typed at the prompt (trimmed, not empty).
func (f *formField) parse(in string) (any, error) {
	var v any
	switch f.kind {
	case kindString:
		v = in
	case kindNumber:
		n, err := strconv.ParseFloat(in, 64)
		if err != nil || math.IsNaN(n) || math.IsInf(n, 0) {
			return nil, errors.New("not a number")
		}
		v = n
	case kindInteger:
		n, err := strconv.ParseInt(in, 10, 0)
		if err != nil {
			return nil, errors.New("not a whole number")
		}
		v = int(n)
	case kindBool:
		switch strings.ToLower(in) {
		case "y", "yes", "true":
			v = true
		case "n", "no", "false":
			v = false
		default:
			return nil, errors.New("answer y or n")
		}
	case kindEnum:
		s, err := f.choose(in)
		if err != nil {
			return nil, err
		}
		v = s
	case kindMulti:
		chosen := map[string]bool{}
		for _, part := range strings.Split(in, ",") {
			if part = strings.TrimSpace(part); part == "" {
				continue
			}
			s, err := f.choose(part)
			if err != nil {
				return nil, err
			}
			chosen[s] = true
		}
		ss := []string{} // in the order of the choices
		for _, o := range f.options {
			if chosen[o.value] {
				ss = append(ss, o.value)
				delete(chosen, o.value)
			}
		}
		v = ss
	}
	if err := f.validate(v); err != nil {
		return nil, err
	}
	return v, nil
}

// choose finds the option an answer names: its value as shown (a value
// that looks like a number is taken as the value), else its number in the
// list, else its value or title in any case, when only one matches.
func (f *formField) choose(in string) (string, error) {
	for _, o := range f.options {
		if in == o.value || in == o.shown {
			return o.value, nil
		}
	}
	if n, err := strconv.Atoi(in); err == nil && n >= 1 && n <= len(f.options) {
		return f.options[n-1].value, nil
	}
	var found []string
	for _, o := range f.options {
		if strings.EqualFold(in, o.shown) || (o.label != "" && strings.EqualFold(in, o.label)) {
			found = append(found, o.value)
		}
	}
	if len(found) == 1 {
		return found[0], nil
	}
	return "", fmt.Errorf("%q is not one of the choices: type its number (1 to %d) or its value", cleanLine(in), len(f.options))
}

// validate checks a typed value against the field's constraints.
func (f *formField) validate(v any) error {
	switch f.kind {
	case kindString:
		s := v.(string)
		n := utf8.RuneCountInString(s)
		if f.minLen != nil && n < *f.minLen {
			return fmt.Errorf("too short (at least %s)", plural(*f.minLen, "character"))
		}
		if f.maxLen != nil && n > *f.maxLen {
			return fmt.Errorf("too long (at most %s)", plural(*f.maxLen, "character"))
		}
		return checkFormat(f.format, s)
	case kindNumber, kindInteger:
		var n float64
		if i, ok := v.(int); ok {
			n = float64(i)
		} else {
			n = v.(float64)
		}
		if (f.min != nil && n < *f.min) || (f.max != nil && n > *f.max) {
			return fmt.Errorf("out of range (%s)", rangeText(f.min, f.max))
		}
	case kindEnum:
		if !f.isOption(v.(string)) {
			return fmt.Errorf("%q is not one of the choices", v)
		}
	case kindMulti:
		ss := v.([]string)
		for _, s := range ss {
			if !f.isOption(s) {
				return fmt.Errorf("%q is not one of the choices", s)
			}
		}
		if (f.minItems != nil && len(ss) < *f.minItems) || (f.maxItems != nil && len(ss) > *f.maxItems) {
			return fmt.Errorf("choose %s", countText(f.minItems, f.maxItems, "choice"))
		}
	}
	return nil
}

func (f *formField) isOption(s string) bool {
	for _, o := range f.options {
		if o.value == s {
			return true
		}
	}
	return false
}

func checkFormat(format, s string) error {
	var ok bool
	switch format {
	case "":
		return nil
	case "email":
		a, err := mail.ParseAddress(s)
		ok = err == nil && a.Name == "" && a.Address == s
	case "uri":
		u, err := url.Parse(s)
		ok = err == nil && u.Scheme != "" && !strings.ContainsAny(s, " \t")
	case "date":
		_, err := time.Parse(time.DateOnly, s)
		ok = err == nil
	case "date-time":
		_, err := time.Parse(time.RFC3339, s)
		ok = err == nil
	}
	if !ok {
		return fmt.Errorf("not %s", formatText(format))
	}
	return nil
}

// hint describes what the field takes.
func (f *formField) hint() string {
	switch f.kind {
	case kindString:
		h := "text"
		if f.format != "" {
			h = formatText(f.format)
		}
		if f.minLen != nil || f.maxLen != nil {
			h += ", " + countText(f.minLen, f.maxLen, "character")
		}
		return h
	case kindNumber, kindInteger:
		h := "number"
		if f.kind == kindInteger {
			h = "whole number"
		}
		if f.min != nil || f.max != nil {
			h += ", " + rangeText(f.min, f.max)
		}
		return h
	case kindBool:
		return "y/n"
	case kindEnum:
		return "choose one: type its number or value"
	default:
		h := "choose any: numbers or values, separated by commas"
		if f.minItems != nil || f.maxItems != nil {
			h += "; " + countText(f.minItems, f.maxItems, "choice")
		}
		return h
	}
}

// show prints a typed value of the field.
func (f *formField) show(v any) string {
	if len(f.options) > 0 {
		var ss []string
		switch v := v.(type) {
		case string:
			ss = []string{v}
		case []string:
			ss = v
		}
		shown := make([]string, 0, len(ss))
		for _, s := range ss {
			for _, o := range f.options {
				if o.value == s {
					shown = append(shown, o.display())
				}
			}
		}
		if len(shown) == 0 {
			return "(none)"
		}
		return strings.Join(shown, ", ")
	}
	switch v := v.(type) {
	case string:
		if v == "" {
			return `""`
		}
		return cleanLine(v)
	case bool:
		if v {
			return "yes"
		}
		return "no"
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	case int:
		return strconv.Itoa(v)
	}
	return fmt.Sprint(v)
}

func formatText(format string) string {
	switch format {
	case "email":
		return "an email address"
	case "uri":
		return "a URI, like https://example.com/"
	case "date":
		return "a date, YYYY-MM-DD"
	case "date-time":
		return "a date and time, like 2025-01-31T14:30:00Z"
	}
	return format
}

func rangeText(min, max *float64) string {
	g := func(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
	switch {
	case min != nil && max != nil:
		return "from " + g(*min) + " to " + g(*max)
	case min != nil:
		return "at least " + g(*min)
	case max != nil:
		return "at most " + g(*max)
	}
	return "any"
}

func countText(min, max *int, unit string) string {
	switch {
	case min != nil && max != nil && *min == *max:
		return plural(*min, unit)
	case min != nil && max != nil:
		return fmt.Sprintf("%d to %s", *min, plural(*max, unit))
	case min != nil:
		return "at least " + plural(*min, unit)
	case max != nil:
		return "at most " + plural(*max, unit)
	}
	return "any number of " + unit + "s"
}

func plural(n int, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return strconv.Itoa(n) + " " + unit + "s"
}
