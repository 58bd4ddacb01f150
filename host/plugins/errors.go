package plugins

import (
	"fmt"

	"github.com/mcphost/mcphost/host/redact"
)

// NotRespondingError is a failed call to a plugin that did not get an answer
// from it (the plugin crashed, hung or broke the protocol): the one error
// users see for a broken plugin. Err is the gRPC error as the call returned
// it, so errors.Is/As and status.FromError reach the gRPC status through
// Unwrap.
type NotRespondingError struct {
	// Plugin is the plugin's name.
	Plugin string
	// Kind names the plugin's role in the message when it helps the user
	// ("auth" reads "auth plugin NAME"); empty reads "plugin NAME".
	Kind string
	// Err is the cause: the gRPC error of the call.
	Err error
}

// Error reads "[KIND ]plugin NAME did not respond; see its log (CAUSE)", with
// the cause's text scrubbed of secrets.
func (e *NotRespondingError) Error() string {
	kind := ""
	if e.Kind != "" {
		kind = e.Kind + " "
	}
	cause := "<nil>"
	if e.Err != nil {
		cause = redact.String(e.Err.Error())
	}
	return fmt.Sprintf("%splugin %s did not respond; see its log (%s)", kind, e.Plugin, cause)
}

// Unwrap returns the gRPC error of the call.
func (e *NotRespondingError) Unwrap() error { return e.Err }
