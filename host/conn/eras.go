package conn

import "github.com/mcphost/mcphost/internal/rawjson"

// olderResult turns a raw tools/call response of a session of NewProtocol
// or later into what a client of an earlier version reads: a complete
// result loses its resultType member (which such a client does not know);
// an error response is as it is. ok is false for a result that needs input
// (resultType "input_required", or anything else but "complete"), which no
// client of an earlier version can read, and for a response that does not
// scan.
func olderResult(resp []byte) (out []byte, ok bool) {
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
