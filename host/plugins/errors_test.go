package plugins

import (
	"errors"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/mcphost/mcphost/host/redact"
)

// TestNotRespondingError: the message users see, with the cause scrubbed,
// and the gRPC status reachable through the error.
func TestNotRespondingError(t *testing.T) {
	t.Parallel()
	cause := status.Error(codes.Unavailable, "dial: password=swordfish")
	tests := []struct {
		name string
		err  *NotRespondingError
		want string
	}{
		{"plugin", &NotRespondingError{Plugin: "transport-ws", Err: cause},
			"plugin transport-ws did not respond; see its log (rpc error: code = Unavailable desc = dial: password=" + redact.Mask + ")"},
		{"auth plugin", &NotRespondingError{Plugin: "auth-xaa", Kind: "auth", Err: cause},
			"auth plugin auth-xaa did not respond; see its log (rpc error: code = Unavailable desc = dial: password=" + redact.Mask + ")"},
		{"no cause", &NotRespondingError{Plugin: "p"}, "plugin p did not respond; see its log (<nil>)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := tt.err.Error(); got != tt.want {
				t.Errorf("Error() = %q, want %q", got, tt.want)
			}
			if tt.err.Err == nil {
				return
			}
			if !errors.Is(tt.err, cause) || status.Code(tt.err) != codes.Unavailable {
				t.Errorf("the gRPC cause is not reachable from %v", tt.err)
			}
		})
	}
}
