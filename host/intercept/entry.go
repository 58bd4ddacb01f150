package intercept

import (
	"github.com/mcphost/mcphost/host/config"
)

// HookEntry returns the entry of the hook block h run by ck, with the
// common fields (events, phases, match, mode, timeout, fail_open, source)
// filled. Every hook constructor ends with it.
func HookEntry(h *config.Hook, ck Checker) (*Entry, error) {
	return &Entry{Name: h.Event, Kind: KindHook, Hook: h.Event, Checker: ck, Blocking: true}, nil // TODO(WP2)
}

// InterceptorEntry returns the entry of the interceptor block ic of kind
// run by ck, with the common fields filled. Every interceptor constructor
// ends with it.
func InterceptorEntry(ic *config.Interceptor, kind Kind, ck Checker) (*Entry, error) {
	return &Entry{Name: ic.Name, Kind: kind, Checker: ck, Blocking: kind != KindBuiltin}, nil // TODO(WP2)
}
