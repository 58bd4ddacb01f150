package hook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/mcphost/mcphost/host/intercept"
)

// inputEnv is what the input says of where the hook runs.
type inputEnv struct {
	cwd, permissionMode string
}

// common are the input keys of every event.
type common struct {
	SessionID      string `json:"session_id"`
	TranscriptPath string `json:"transcript_path"`
	Cwd            string `json:"cwd"`
	PermissionMode string `json:"permission_mode"`
	HookEventName  string `json:"hook_event_name"`
}

// extras is the input's "mcphost" object: what a gateway knows beyond
// Claude Code's keys.
type extras struct {
	// Server is the upstream server's name, Tool the tool's name on it.
	Server    string     `json:"server"`
	Tool      string     `json:"tool"`
	Principal *principal `json:"principal"`
	Endpoint  string     `json:"endpoint"`
	Front     string     `json:"front"`
}

type principal struct {
	Issuer  string   `json:"iss"`
	Subject string   `json:"sub"`
	Groups  []string `json:"groups"`
}

type preToolUse struct {
	common
	ToolName  string          `json:"tool_name"`
	ToolInput json.RawMessage `json:"tool_input"`
	ToolUseID string          `json:"tool_use_id"`
	Mcphost   extras          `json:"mcphost"`
}

type postToolUse struct {
	common
	ToolName     string          `json:"tool_name"`
	ToolInput    json.RawMessage `json:"tool_input"`
	ToolResponse json.RawMessage `json:"tool_response"`
	ToolUseID    string          `json:"tool_use_id"`
	DurationMS   int64           `json:"duration_ms"`
	Mcphost      extras          `json:"mcphost"`
}

type postToolUseFailure struct {
	common
	ToolName    string          `json:"tool_name"`
	ToolInput   json.RawMessage `json:"tool_input"`
	ToolUseID   string          `json:"tool_use_id"`
	Error       string          `json:"error"`
	IsInterrupt bool            `json:"is_interrupt"`
	DurationMS  int64           `json:"duration_ms"`
	Mcphost     extras          `json:"mcphost"`
}

type elicitation struct {
	common
	MCPServerName   string `json:"mcp_server_name"`
	Message         string `json:"message"`
	Mode            string `json:"mode"`
	RequestedSchema any    `json:"requested_schema,omitempty"`
	URL             string `json:"url,omitempty"`
	ElicitationID   string `json:"elicitation_id,omitempty"`
	Mcphost         extras `json:"mcphost"`
}

type elicitationResult struct {
	common
	MCPServerName string          `json:"mcp_server_name"`
	Action        string          `json:"action"`
	Content       json.RawMessage `json:"content,omitempty"`
	Mode          string          `json:"mode,omitempty"`
	ElicitationID string          `json:"elicitation_id,omitempty"`
	Mcphost       extras          `json:"mcphost"`
}

// encodeInput is the JSON a hook of event gets for c: Claude Code's
// common keys, the event's keys, and the "mcphost" extras.
func encodeInput(event string, c *intercept.Call, env inputEnv) ([]byte, error) {
	cm := common{
		SessionID:      c.Session,
		TranscriptPath: "",
		Cwd:            env.cwd,
		PermissionMode: env.permissionMode,
		HookEventName:  event,
	}
	ex := extras{Server: c.Server, Tool: c.Original, Endpoint: c.Endpoint, Front: c.Front}
	if c.Who != nil {
		ex.Principal = &principal{Issuer: c.Who.Issuer, Subject: c.Who.Subject, Groups: c.Who.Groups}
		if ex.Principal.Groups == nil {
			ex.Principal.Groups = []string{}
		}
	}
	var v any
	switch event {
	case PreToolUse:
		in := c.Payload
		if len(in) == 0 {
			in = c.Args
		}
		v = preToolUse{common: cm, ToolName: c.Name, ToolInput: object(in), ToolUseID: c.ID, Mcphost: ex}
	case PostToolUse:
		v = postToolUse{common: cm, ToolName: c.Name, ToolInput: object(c.Args), ToolResponse: object(c.Payload),
			ToolUseID: c.ID, DurationMS: c.Duration.Milliseconds(), Mcphost: ex}
	case PostToolUseFailure:
		v = postToolUseFailure{common: cm, ToolName: c.Name, ToolInput: object(c.Args), ToolUseID: c.ID,
			Error: failureText(c), IsInterrupt: errors.Is(c.Err, context.Canceled),
			DurationMS: c.Duration.Milliseconds(), Mcphost: ex}
	case Elicitation:
		if c.Elicit == nil {
			return nil, errors.New("no elicitation")
		}
		e := elicitation{common: cm, MCPServerName: c.Server, Message: c.Elicit.Message, Mode: elicitMode(c),
			URL: c.Elicit.URL, ElicitationID: c.Elicit.ElicitationID, Mcphost: ex}
		if e.Mode == "form" && c.Elicit.RequestedSchema != nil {
			e.RequestedSchema = c.Elicit.RequestedSchema
		}
		v = e
	case ElicitationResult:
		var res struct {
			Action  string          `json:"action"`
			Content json.RawMessage `json:"content"`
		}
		if len(c.Payload) > 0 {
			if err := json.Unmarshal(c.Payload, &res); err != nil {
				return nil, fmt.Errorf("the elicitation result: %w", err)
			}
		}
		e := elicitationResult{common: cm, MCPServerName: c.Server, Action: res.Action, Mcphost: ex}
		if res.Action == "accept" && len(res.Content) > 0 && !bytes.Equal(res.Content, []byte("null")) {
			e.Content = res.Content
		}
		if c.Elicit != nil {
			e.Mode, e.ElicitationID = elicitMode(c), c.Elicit.ElicitationID
		}
		v = e
	default:
		return nil, fmt.Errorf("unknown event %q", event)
	}
	return json.Marshal(v)
}

// object is raw, or {} when there is none.
func object(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return json.RawMessage("{}")
	}
	return raw
}

// elicitMode is the elicitation's mode, inferred when the server left it
// out (as the MCP specification says: a URL means url, else form).
func elicitMode(c *intercept.Call) string {
	if c.Elicit.Mode != "" {
		return c.Elicit.Mode
	}
	if c.Elicit.URL != "" {
		return "url"
	}
	return "form"
}

// failureText is PostToolUseFailure's "error": the call's error, or the
// text of an error result.
func failureText(c *intercept.Call) string {
	if c.Err != nil {
		return c.Err.Error()
	}
	var res struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
	}
	_ = json.Unmarshal(c.Payload, &res) // best effort: the result was checked upstream
	var parts []string
	for _, it := range res.Content {
		if it.Type == "text" && it.Text != "" {
			parts = append(parts, it.Text)
		}
	}
	if len(parts) == 0 {
		return "the tool returned an error result"
	}
	return strings.Join(parts, "\n")
}

// output is what one run produced: a command's exit code, or an HTTP
// hook's status, with what it wrote.
type output struct {
	// http is set for an HTTP hook: status and stdout (the body) apply.
	http           bool
	exit, status   int
	stdout, stderr []byte
}

// decoded is what a run said beyond its verdict, for the logs.
type decoded struct {
	// systemMessage is the output's message to the user.
	systemMessage string
	// plain is stdout that was not JSON output (exit 0).
	plain string
}

// hookOutput is Claude Code's JSON output, as far as these events use it.
type hookOutput struct {
	Continue       *bool         `json:"continue"`
	StopReason     string        `json:"stopReason"`
	SuppressOutput bool          `json:"suppressOutput"`
	SystemMessage  string        `json:"systemMessage"`
	Decision       string        `json:"decision"`
	Reason         string        `json:"reason"`
	Specific       *hookSpecific `json:"hookSpecificOutput"`
}

type hookSpecific struct {
	HookEventName            string          `json:"hookEventName"`
	PermissionDecision       string          `json:"permissionDecision"`
	PermissionDecisionReason string          `json:"permissionDecisionReason"`
	UpdatedInput             json.RawMessage `json:"updatedInput"`
	AdditionalContext        string          `json:"additionalContext"`
	UpdatedMCPToolOutput     json.RawMessage `json:"updatedMCPToolOutput"`
	Action                   string          `json:"action"`
	Content                  json.RawMessage `json:"content"`
}

// OutputError is a non-blocking hook error: an exit code other than 0 and
// 2, output that is not valid hook output, an HTTP status other than 2xx.
// Claude Code goes on with the call; so does the gateway (the output is
// ignored).
type OutputError struct {
	// Exit is the exit code (0 for output errors), Status the HTTP status.
	Exit, Status int
	// Msg says what is wrong; it holds no hook output.
	Msg string
}

func (e *OutputError) Error() string { return e.Msg }

// decodeOutput maps a command hook's exit code and output to the verdict
// of event, as Claude Code's hooks reference defines it: exit 0 parses
// stdout as JSON output (non-JSON stdout decides nothing), exit 2 blocks
// with stderr as the reason, any other exit is a non-blocking error (an
// *OutputError, with a Pass verdict). Its input is untrusted.
func decodeOutput(event string, exit int, stdout, stderr []byte) (intercept.Verdict, error) {
	v, _, err := decode(event, output{exit: exit, stdout: stdout, stderr: stderr})
	return v, err
}

// decode maps one run's output to a verdict; see decodeOutput. An HTTP
// hook's 2xx plain-text body is additional context, an empty one decides
// nothing, and a status other than 2xx is a non-blocking error.
func decode(event string, out output) (intercept.Verdict, decoded, error) {
	var d decoded
	if out.http {
		if out.status < 200 || out.status > 299 {
			return intercept.Verdict{}, d, &OutputError{Status: out.status, Msg: fmt.Sprintf("HTTP status %d", out.status)}
		}
	} else {
		switch out.exit {
		case 0:
		case 2:
			return blocked(event, text(out.stderr)), d, nil
		default:
			return intercept.Verdict{}, d, &OutputError{Exit: out.exit, Msg: fmt.Sprintf("exit status %d", out.exit)}
		}
	}
	body := bytes.TrimSpace(out.stdout)
	if len(body) == 0 {
		return intercept.Verdict{}, d, nil
	}
	if body[0] != '{' {
		d.plain = string(body)
		if out.http {
			return intercept.Verdict{Context: text(body)}, d, nil
		}
		return intercept.Verdict{}, d, nil
	}
	var o hookOutput
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&o); err != nil {
		return intercept.Verdict{}, d, &OutputError{Msg: "invalid JSON output: " + jsonProblem(err)}
	}
	if dec.More() {
		return intercept.Verdict{}, d, &OutputError{Msg: "invalid JSON output: something follows the object"}
	}
	d.systemMessage = o.SystemMessage
	if o.Specific != nil && o.Specific.HookEventName != "" && o.Specific.HookEventName != event {
		return intercept.Verdict{}, d, &OutputError{Msg: "hookSpecificOutput.hookEventName is not " + event}
	}
	v, err := verdict(event, &o)
	if err != nil {
		return intercept.Verdict{}, d, err
	}
	return v, d, nil
}

// blocked is the verdict of an exit 2 (reason: stderr).
func blocked(event, reason string) intercept.Verdict {
	switch event {
	case PostToolUseFailure:
		// "Shows stderr to Claude (tool already failed)".
		return intercept.Verdict{Context: reason}
	case Elicitation, ElicitationResult:
		// "Denies the elicitation"; "the action becomes decline".
		return intercept.Verdict{Action: intercept.Deny, Reason: reason, Payload: declined}
	}
	return intercept.Verdict{Action: intercept.Deny, Reason: reason}
}

// declined is the answer of a denied elicitation.
var declined = json.RawMessage(`{"action":"decline"}`)

// verdict maps valid JSON output of event.
func verdict(event string, o *hookOutput) (intercept.Verdict, error) {
	s := o.Specific
	if s == nil {
		s = &hookSpecific{}
	}
	stop := o.Continue != nil && !*o.Continue
	stopReason := text([]byte(o.StopReason))
	if stopReason == "" {
		stopReason = "stopped by a hook"
	}
	ctx := text([]byte(s.AdditionalContext))
	switch event {
	case PreToolUse:
		if stop {
			return intercept.Verdict{Action: intercept.Deny, Reason: stopReason}, nil
		}
		decision, reason := s.PermissionDecision, s.PermissionDecisionReason
		if decision == "" {
			// Deprecated top-level decision: approve = allow, block = deny.
			switch o.Decision {
			case "":
			case "approve":
				decision, reason = "allow", o.Reason
			case "block":
				decision, reason = "deny", o.Reason
			default:
				return intercept.Verdict{}, &OutputError{Msg: "decision is not approve or block"}
			}
		}
		if len(s.UpdatedInput) > 0 && !isObject(s.UpdatedInput) && !isNull(s.UpdatedInput) {
			return intercept.Verdict{}, &OutputError{Msg: "updatedInput is not an object"}
		}
		upd := s.UpdatedInput
		if isNull(upd) {
			upd = nil
		}
		v := intercept.Verdict{Reason: text([]byte(reason)), Context: ctx}
		switch decision {
		case "allow":
			v.Action, v.Payload = intercept.Allow, upd
		case "ask":
			v.Action, v.Payload = intercept.Ask, upd
		case "deny":
			v.Action = intercept.Deny
		case "defer", "":
			// defer: Claude Code honours it only with -p; here it decides
			// nothing, as in an interactive session.
			v.Reason = ""
			if decision == "" && upd != nil {
				v.Action, v.Payload = intercept.Mutate, upd
			}
		default:
			return intercept.Verdict{}, &OutputError{Msg: "permissionDecision is not allow, deny, ask or defer"}
		}
		return v, nil
	case PostToolUse:
		if stop {
			return intercept.Verdict{Action: intercept.Deny, Reason: stopReason, Context: ctx}, nil
		}
		switch o.Decision {
		case "":
		case "block":
			return intercept.Verdict{Action: intercept.Deny, Reason: text([]byte(o.Reason)), Context: ctx}, nil
		default:
			return intercept.Verdict{}, &OutputError{Msg: "decision is not block"}
		}
		v := intercept.Verdict{Context: ctx}
		if len(s.UpdatedMCPToolOutput) > 0 && !isNull(s.UpdatedMCPToolOutput) {
			res, err := toolResult(s.UpdatedMCPToolOutput)
			if err != nil {
				return intercept.Verdict{}, &OutputError{Msg: "updatedMCPToolOutput: " + err.Error()}
			}
			v.Action, v.Payload = intercept.Mutate, res
		}
		return v, nil
	case PostToolUseFailure:
		// The tool already failed: what a hook says reaches the model as
		// context.
		var parts []string
		if stop {
			parts = append(parts, stopReason)
		}
		switch o.Decision {
		case "":
		case "block":
			if r := text([]byte(o.Reason)); r != "" {
				parts = append(parts, r)
			}
		default:
			return intercept.Verdict{}, &OutputError{Msg: "decision is not block"}
		}
		if ctx != "" {
			parts = append(parts, ctx)
		}
		return intercept.Verdict{Context: cut(strings.Join(parts, "\n"), MaxText)}, nil
	case Elicitation, ElicitationResult:
		if stop {
			return intercept.Verdict{Action: intercept.Deny, Reason: stopReason, Payload: declined}, nil
		}
		if s.Action == "" {
			return intercept.Verdict{}, nil
		}
		switch s.Action {
		case "accept", "decline", "cancel":
		default:
			return intercept.Verdict{}, &OutputError{Msg: "action is not accept, decline or cancel"}
		}
		res := struct {
			Action  string          `json:"action"`
			Content json.RawMessage `json:"content,omitempty"`
		}{Action: s.Action}
		if len(s.Content) > 0 && !isNull(s.Content) {
			if !isObject(s.Content) {
				return intercept.Verdict{}, &OutputError{Msg: "content is not an object"}
			}
			if s.Action == "accept" {
				res.Content = s.Content
			}
		}
		b, err := json.Marshal(res)
		if err != nil {
			return intercept.Verdict{}, &OutputError{Msg: "content: " + jsonProblem(err)}
		}
		return intercept.Verdict{Action: intercept.Mutate, Payload: b}, nil
	}
	return intercept.Verdict{}, &OutputError{Msg: fmt.Sprintf("unknown event %q", event)}
}

// toolResult maps updatedMCPToolOutput to an MCP CallToolResult: a string
// is one text item, an array the content, an object with "content" the
// whole result, an object with a "type" one content item; anything else is
// one text item of its JSON.
func toolResult(raw json.RawMessage) (json.RawMessage, error) {
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, errors.New(jsonProblem(err))
	}
	var res map[string]any
	switch x := v.(type) {
	case string:
		res = map[string]any{"content": []any{textItem(x)}}
	case []any:
		res = map[string]any{"content": x}
	case map[string]any:
		if _, ok := x["content"]; ok {
			if _, isList := x["content"].([]any); !isList {
				return nil, errors.New("content is not an array")
			}
			return raw, nil
		}
		if t, ok := x["type"].(string); ok && t != "" {
			res = map[string]any{"content": []any{x}}
		} else {
			res = map[string]any{"content": []any{textItem(string(raw))}}
		}
	default:
		res = map[string]any{"content": []any{textItem(string(raw))}}
	}
	b, err := json.Marshal(res)
	if err != nil {
		return nil, errors.New(jsonProblem(err))
	}
	return b, nil
}

func textItem(s string) map[string]any { return map[string]any{"type": "text", "text": s} }

// keepContent gives an ElicitationResult override that accepts without
// content the answer's content: the hook changed the action only.
func keepContent(override, answer json.RawMessage) json.RawMessage {
	var o, a struct {
		Action  string          `json:"action"`
		Content json.RawMessage `json:"content,omitempty"`
	}
	if json.Unmarshal(override, &o) != nil || o.Action != "accept" || len(o.Content) > 0 {
		return override
	}
	if json.Unmarshal(answer, &a) != nil || len(a.Content) == 0 || isNull(a.Content) {
		return override
	}
	o.Content = a.Content
	b, err := json.Marshal(o)
	if err != nil {
		return override
	}
	return b
}

// text is b trimmed, made valid UTF-8 and capped at MaxText characters: a
// reason or a context.
func text(b []byte) string {
	s := strings.TrimSpace(string(b))
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	return cut(s, MaxText)
}

func isObject(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '{'
}

func isNull(raw json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(raw), []byte("null")) }

// jsonProblem says what is wrong with JSON output without quoting it.
func jsonProblem(err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return fmt.Sprintf("syntax error at byte %d", se.Offset)
	case errors.As(err, &te):
		return fmt.Sprintf("%s is a JSON %s, not %s", te.Field, te.Value, te.Type)
	}
	return "not a JSON object"
}
