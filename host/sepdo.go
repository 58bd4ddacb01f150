package host

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/intercept/sep"
	"github.com/mcphost/mcphost/host/registry"
)

// SEP-2624 interceptor servers (interceptor "NAME" { server = "…" }): the
// server block is connected, approved, pinned and supervised like every
// server, but it is marked InterceptorOnly, so its own tools, prompts and
// resources are not served and it does not count for ready_when. The
// interceptor block's checks reach it through sepDo and sepGeneration.

// sepDo runs fn with a live session of the interceptor server, connecting
// first if needed (a sep.Do).
func (h *Host) sepDo(ctx context.Context, server string, fn func(context.Context, *mcp.ClientSession) error) error {
	return h.conns.Do(ctx, server, fn)
}

// sepGeneration is the generation of the interceptor server's current
// session (0 before the first connect): a new one is listed again.
func (h *Host) sepGeneration(ctx context.Context, server string) uint64 {
	return h.conns.Generation(ctx, server)
}

// SEPDo returns what sep.New needs of the host: how to run a request on an
// interceptor server, and its session generation.
func (h *Host) SEPDo() (sep.Do, func(ctx context.Context, server string) uint64) {
	return h.sepDo, h.sepGeneration
}

// InterceptorServer reports whether server is an interceptor server only
// (config.Server.InterceptorOnly): none of its features (tools, prompts,
// resources, instructions, extensions) is served.
func (h *Host) InterceptorServer(server string) bool { return h.interceptorOnly(server) }

// interceptorOnly reports whether server is an interceptor server only
// (config.Server.InterceptorOnly): none of its features is served.
func (h *Host) interceptorOnly(server string) bool {
	c := h.conns.Get(server)
	if c == nil {
		return false
	}
	s := c.Config()
	return s != nil && s.InterceptorOnly
}

// errInterceptorOnly is the refusal of an interceptor server's own
// features.
func errInterceptorOnly(server string) error {
	return fmt.Errorf("%w: server %q is an interceptor server: its tools, prompts and resources are not served", registry.ErrNotFound, server)
}
