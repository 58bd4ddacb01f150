package conn

import "github.com/mcphost/mcphost/internal/rawjson"

// completeResult checks a raw tools/call response of a session of
// NewProtocol or later: ok for a complete result (or an error response),
// false for a result that needs input (resultType "input_required", or
// anything else but "complete") and for a response that does not scan. A
// result that needs input is the first round of a multi-round-trip call:
// the gateway binds its request state to the call and answers through the
// caller (CallTool), so it is never passed on raw. With older, a complete
// result loses its resultType member, which a client of an earlier version
// does not know.
func completeResult(resp []byte, older bool) (out []byte, ok bool) {
	var arr [8]rawjson.Member
	ms, err := rawjson.Members(arr[:0], resp)
	if err != nil {
		return nil, false
	}
	result, found := rawjson.Find(ms, "result")
	if !found {
		return resp, true // an error response
	}
	var rarr [8]rawjson.Member
	rs, err := rawjson.Members(rarr[:0], result.Value)
	if err != nil {
		return nil, false
	}
	rt, found := rawjson.Find(rs, "resultType")
	if !found {
		return resp, true
	}
	if string(rt.Value) != `"complete"` {
		return nil, false
	}
	if !older {
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
