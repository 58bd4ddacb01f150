package host

import (
	"context"
	"encoding/json"

	"github.com/mcphost/mcphost/host/intercept"
)

// askArgumentsKey is the context key of the arguments of the call that
// Options.Ask is asked about.
type askArgumentsKey struct{}

// AskArguments returns the arguments of the call an Options.Ask function is
// asked about, as JSON as they will be sent (after hooks' updatedInput); nil
// when the call has none. It is set on the context Ask is called with, so
// that a prompt can show what the call would do.
func AskArguments(ctx context.Context) json.RawMessage {
	b, _ := ctx.Value(askArgumentsKey{}).(json.RawMessage)
	return b
}

// withAskArguments is ctx carrying the arguments of the call about to be
// asked about: call's when hooks or interceptors checked the call (what
// will be sent), else in.
func withAskArguments(ctx context.Context, in callArgs, call *intercept.Call) context.Context {
	var b json.RawMessage
	if call != nil {
		b = call.Args
	}
	if b == nil {
		b, _ = in.json() // (an encoding error is the call's own, reported when it is sent)
	}
	return context.WithValue(ctx, askArgumentsKey{}, b)
}
