package telemetry

import (
	"context"
	"errors"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
)

// Error classes that ErrorType returns or that callers pass as errType.
const (
	// ErrorTypeToolError is a tools/call result with isError set (semantic
	// conventions: "tool_error").
	ErrorTypeToolError = "tool_error"
	// ErrorTypeTimeout is a deadline that passed.
	ErrorTypeTimeout = "timeout"
	// ErrorTypeCanceled is a canceled context.
	ErrorTypeCanceled = "canceled"
)

// ErrorType returns a low-cardinality class of err for error.type: "" for
// nil; ErrorTypeTimeout or ErrorTypeCanceled for context errors; the code
// of a JSON-RPC error ("-32602"); the ErrorType() of the first error in the
// chain that has one (so a package can name its errors: "permission_denied");
// else the Go type of err with fmt's wrapping peeled off ("*net.OpError").
// It never looks at an error's message, which may quote arguments or
// credentials.
func ErrorType(err error) string {
	if err == nil {
		return ""
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return ErrorTypeTimeout
	}
	if errors.Is(err, context.Canceled) {
		return ErrorTypeCanceled
	}
	if code, ok := jsonrpcCode(err); ok {
		return strconv.FormatInt(code, 10)
	}
	return semconv.ErrorType(err).Value.AsString()
}

// jsonrpcCode returns the code of the JSON-RPC error in err's chain.
func jsonrpcCode(err error) (int64, bool) {
	var we *jsonrpc.Error
	if errors.As(err, &we) && we != nil {
		return we.Code, true
	}
	return 0, false
}
