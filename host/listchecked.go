package host

import "context"

// ListChecked reports whether a response check (hook or interceptor) of
// the list method (tools/list, …: CheckList) would run for ctx's caller,
// so that a caller that builds a list only to check it (the gateway's
// search_tools) builds none when no check would see it.
func (s *Serving) ListChecked(ctx context.Context, method string) bool {
	c := s.h.chain()
	if c == nil {
		return false
	}
	event, ok := listEvent(method)
	if !ok {
		return false
	}
	plan := c.ForEvent(event, "", "", principalOf(ctx))
	return plan != nil && plan.HasResponse()
}
