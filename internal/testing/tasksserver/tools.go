package tasksserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// Task support of a tool (execution.taskSupport).
const (
	supportForbidden = "forbidden"
	supportOptional  = "optional"
	supportRequired  = "required"
)

// tool is one fixture tool.
type tool struct {
	name, description string
	inputSchema       string
	support           string
	// prelude, if set, runs synchronously in the tools/call request before
	// any task is created (test_tool_with_task's MRTR round); its value is
	// handed to run as callCtx.pre.
	prelude func(call *callCtx) (any, error)
	run     func(ctx context.Context, call *callCtx) (*toolResult, error)
}

func (t *tool) describe() map[string]any {
	return map[string]any{
		"name":        t.name,
		"description": t.description,
		"inputSchema": json.RawMessage(t.inputSchema),
		"execution":   map[string]any{"taskSupport": t.support},
	}
}

// callCtx is one call of a tool: its arguments, and how it asks the client
// for input — inside a task by input_required and tasks/update, outside one
// by an MRTR InputRequiredResult answered by the next tools/call.
type callCtx struct {
	args json.RawMessage
	pre  any
	ask  func(ctx context.Context, reqs map[string]json.RawMessage) (map[string]json.RawMessage, error)
}

// errInputRequired ends a synchronous call that needs input the request did
// not carry: the call is answered with an InputRequiredResult.
type errInputRequired struct{ requests map[string]json.RawMessage }

func (e *errInputRequired) Error() string { return "input required" }

// mrtrAsk answers ask from a request's inputResponses (SEP-2322): all asked
// keys present, or errInputRequired.
func mrtrAsk(responses map[string]json.RawMessage) func(context.Context, map[string]json.RawMessage) (map[string]json.RawMessage, error) {
	return func(_ context.Context, reqs map[string]json.RawMessage) (map[string]json.RawMessage, error) {
		got := map[string]json.RawMessage{}
		for k := range reqs {
			v, ok := responses[k]
			if !ok {
				return nil, &errInputRequired{requests: maps.Clone(reqs)}
			}
			got[k] = v
		}
		return got, nil
	}
}

// toolResult is a CallToolResult with text content.
type toolResult struct {
	Content []textContent `json:"content"`
	IsError bool          `json:"isError,omitempty"`
}

type textContent struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

func text(format string, args ...any) *toolResult {
	return &toolResult{Content: []textContent{{Type: "text", Text: fmt.Sprintf(format, args...)}}}
}

// elicitAnswer is an ElicitResult as an input response.
type elicitAnswer struct {
	Action  string         `json:"action"`
	Content map[string]any `json:"content"`
}

func decodeAnswer(raw json.RawMessage) (elicitAnswer, error) {
	var a elicitAnswer
	if err := json.Unmarshal(raw, &a); err != nil || a.Action == "" {
		return a, invalidParams("an input response must be an elicitation result {action, content}")
	}
	return a, nil
}

// elicit is an elicitation/create input request for a form of one field.
func elicit(message, field, typ string) json.RawMessage {
	req := map[string]any{
		"method": "elicitation/create",
		"params": map[string]any{
			"mode":    "form",
			"message": message,
			"requestedSchema": map[string]any{
				"type":       "object",
				"properties": map[string]any{field: map[string]any{"type": typ}},
				"required":   []string{field},
			},
		},
	}
	raw, _ := json.Marshal(req) // a map of strings cannot fail to encode.
	return raw
}

func decodeArgs(raw json.RawMessage, v any) error {
	if len(raw) == 0 || isNull(raw) {
		return nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return invalidParams("invalid arguments: %v", err)
	}
	return nil
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// maxSeconds bounds slow_compute.
const maxSeconds = 600

// fixtures are the tools the conformance suite's tasks scenarios call.
func fixtures(delay time.Duration) []*tool {
	return []*tool{{
		name:        "greet",
		description: "Returns a greeting (synchronous only).",
		inputSchema: `{"type":"object","properties":{"name":{"type":"string"}}}`,
		support:     supportForbidden,
		run: func(_ context.Context, c *callCtx) (*toolResult, error) {
			var a struct {
				Name string `json:"name"`
			}
			if err := decodeArgs(c.args, &a); err != nil {
				return nil, err
			}
			return text("Hello, %s!", a.Name), nil
		},
	}, {
		name:        "slow_compute",
		description: "Sleeps for the given seconds, then returns; a task where the client supports tasks.",
		inputSchema: `{"type":"object","properties":{"seconds":{"type":"number"},"label":{"type":"string"}}}`,
		support:     supportOptional,
		run: func(ctx context.Context, c *callCtx) (*toolResult, error) {
			var a struct {
				Seconds float64 `json:"seconds"`
				Label   string  `json:"label"`
			}
			if err := decodeArgs(c.args, &a); err != nil {
				return nil, err
			}
			if a.Seconds < 0 || a.Seconds > maxSeconds {
				return nil, invalidParams("seconds must be between 0 and %d", maxSeconds)
			}
			if err := sleep(ctx, time.Duration(a.Seconds*float64(time.Second))); err != nil {
				return nil, err
			}
			return text("computed %q after %gs", a.Label, a.Seconds), nil
		},
	}, {
		name:        "failing_job",
		description: "A task that ends with a tool error (isError).",
		inputSchema: `{"type":"object"}`,
		support:     supportRequired,
		run: func(ctx context.Context, _ *callCtx) (*toolResult, error) {
			if err := sleep(ctx, delay); err != nil {
				return nil, err
			}
			r := text("the job failed")
			r.IsError = true
			return r, nil
		},
	}, {
		name:        "protocol_error_job",
		description: "A task whose handler panics: it ends failed with a protocol error.",
		inputSchema: `{"type":"object"}`,
		support:     supportOptional,
		run: func(ctx context.Context, _ *callCtx) (*toolResult, error) {
			if err := sleep(ctx, delay); err != nil {
				return nil, err
			}
			panic("protocol_error_job always panics")
		},
	}, {
		name:        "confirm_delete",
		description: "Asks the user to confirm deleting a file, then answers.",
		inputSchema: `{"type":"object","properties":{"filename":{"type":"string"}}}`,
		support:     supportOptional,
		run: func(ctx context.Context, c *callCtx) (*toolResult, error) {
			var a struct {
				Filename string `json:"filename"`
			}
			if err := decodeArgs(c.args, &a); err != nil {
				return nil, err
			}
			answers, err := c.ask(ctx, map[string]json.RawMessage{
				"confirm": elicit(fmt.Sprintf("Delete %s?", a.Filename), "confirm", "boolean"),
			})
			if err != nil {
				return nil, err
			}
			ans, err := decodeAnswer(answers["confirm"])
			if err != nil {
				return nil, err
			}
			if ans.Action == "accept" && ans.Content["confirm"] == true {
				return text("deleted %s", a.Filename), nil
			}
			return text("kept %s", a.Filename), nil
		},
	}, {
		name:        "multi_input",
		description: "Asks two questions at once, then answers with both.",
		inputSchema: `{"type":"object"}`,
		support:     supportOptional,
		run: func(ctx context.Context, c *callCtx) (*toolResult, error) {
			answers, err := c.ask(ctx, map[string]json.RawMessage{
				"first":  elicit("First name?", "name", "string"),
				"second": elicit("Second name?", "name", "string"),
			})
			if err != nil {
				return nil, err
			}
			var names [2]any
			for i, k := range []string{"first", "second"} {
				ans, err := decodeAnswer(answers[k])
				if err != nil {
					return nil, err
				}
				names[i] = ans.Content["name"]
			}
			return text("got %v and %v", names[0], names[1]), nil
		},
	}, {
		name:        "test_tool_with_task",
		description: "Asks for the user's name by an MRTR round, then continues as a task.",
		inputSchema: `{"type":"object"}`,
		support:     supportRequired,
		prelude: func(c *callCtx) (any, error) {
			answers, err := c.ask(context.Background(), map[string]json.RawMessage{
				"user_name": elicit("What is your name?", "name", "string"),
			})
			if err != nil {
				return nil, err
			}
			ans, err := decodeAnswer(answers["user_name"])
			if err != nil {
				return nil, err
			}
			name, _ := ans.Content["name"].(string)
			if ans.Action != "accept" || name == "" {
				return nil, invalidParams("user_name: an accepted answer with a name is required")
			}
			return name, nil
		},
		run: func(ctx context.Context, c *callCtx) (*toolResult, error) {
			if err := sleep(ctx, delay); err != nil {
				return nil, err
			}
			return text("Hello, %s! (gathered before the task)", c.pre), nil
		},
	}}
}

// callTool answers tools/call: a CreateTaskResult where the tool supports
// tasks and the client declared the extension (for this request or its
// session), else the tool's result, or an InputRequiredResult when it needs
// input the request did not carry.
func (s *Server) callTool(ctx context.Context, caps *clientCaps, req *request) (any, error) {
	tl, ok := s.tools[req.name]
	if !ok {
		return nil, invalidParams("unknown tool %q", req.name)
	}
	tasks := caps.hasTasks()
	if tl.support == supportRequired && !tasks {
		return nil, missingTasksCapability()
	}
	call := &callCtx{args: req.arguments, ask: mrtrAsk(req.inputResponses)}
	if tl.prelude != nil {
		pre, err := tl.prelude(call)
		if err != nil {
			return inputRequiredOr(err)
		}
		call.pre = pre
	}
	if tasks && tl.support != supportForbidden {
		return s.startTask(tl, call), nil
	}
	res, err := runGuarded(ctx, tl, call)
	if err != nil {
		return inputRequiredOr(err)
	}
	return struct {
		ResultType string `json:"resultType"`
		*toolResult
	}{"complete", res}, nil
}

// inputRequiredOr turns errInputRequired into an InputRequiredResult, a
// *jsonrpc.Error into itself and any other error into an internal error.
func inputRequiredOr(err error) (any, error) {
	var ir *errInputRequired
	if errors.As(err, &ir) {
		return map[string]any{"resultType": "input_required", "inputRequests": ir.requests}, nil
	}
	var jerr *jsonrpc.Error
	if errors.As(err, &jerr) {
		return nil, jerr
	}
	return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
}
