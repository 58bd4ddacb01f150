package conn

import (
	"context"

	"github.com/mcphost/mcphost/internal/rawjson"
)

// completeResult checks a raw tools/call response of a session of
// NewProtocol or later: ok is false only for a result that needs input
// (resultType "input_required"), the first round of a multi-round-trip
// call: the gateway binds its request state to the call and answers through
// the caller (CallTool), so it is never passed on raw. Anything else is
// passed on (the call has run: it must not be sent again): with older, a
// complete result loses its resultType member, which a client of an
// earlier version does not know; a response that does not scan, or a
// result of another type, is left as it is.
func completeResult(resp []byte, older bool) (out []byte, ok bool) {
	return completeResultTasks(context.Background(), resp, older, nil, "", "")
}

// completeResultTasks is completeResult, but a task result (resultType
// "task") of server has its taskId named by ids (when not nil; see
// taskResult).
func completeResultTasks(ctx context.Context, resp []byte, older bool, ids TaskIDs, server, version string) (out []byte, ok bool) {
	var arr [8]rawjson.Member
	ms, err := rawjson.Members(arr[:0], resp)
	if err != nil {
		return resp, true
	}
	result, found := rawjson.Find(ms, "result")
	if !found {
		return resp, true // an error response
	}
	var rarr [8]rawjson.Member
	rs, err := rawjson.Members(rarr[:0], result.Value)
	if err != nil {
		return resp, true
	}
	rt, found := rawjson.Find(rs, "resultType")
	if !found {
		return resp, true
	}
	switch {
	case rawjson.Is(rt.Value, "input_required"):
		return nil, false
	case ids != nil && rawjson.Is(rt.Value, "task"):
		out, _, _ := taskResult(ctx, ids, server, version, resp, rs, result.Start)
		return out, true
	case !older || !rawjson.Is(rt.Value, "complete"):
		return resp, true
	}
	out = make([]byte, 0, len(resp))
	out = append(out, resp[:result.Start]...)
	out = append(out, '{')
	first := true
	for _, m := range rs {
		if string(m.Key) == "resultType" {
			continue
		}
		if !first {
			out = append(out, ',')
		}
		first = false
		out = append(out, '"')
		out = append(out, m.Key...)
		out = append(out, `":`...)
		out = append(out, m.Value...)
	}
	out = append(out, '}')
	return append(out, resp[result.End:]...), true
}
