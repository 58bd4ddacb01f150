// Package mcpmeta is the one place that handles the protocol-reserved _meta
// members ("io.modelcontextprotocol/…": protocol version, client info and
// capabilities, server info, log level). They describe one hop — the
// downstream client's session with the gateway, or the gateway's with a
// server — so the gateway never passes them from one hop to the other, in
// decoded messages (Strip) or raw ones (StripRaw, Reserved).
package mcpmeta

import (
	"bytes"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/internal/rawjson"
)

// Prefix starts every protocol-reserved _meta member name.
const Prefix = "io.modelcontextprotocol/"

var prefix = []byte(Prefix)

// IsReserved reports whether a _meta member name is protocol-reserved.
func IsReserved(name string) bool { return strings.HasPrefix(name, Prefix) }

// GatewayPrefix starts the _meta member names the gateway uses for itself
// between its own parts (e.g. a notification's route, an elicitation's
// schema): a server's own member of such a name is never passed on.
const GatewayPrefix = "dev.mcphost/"

// IsGateways reports whether a _meta member name is one of the gateway's
// own (GatewayPrefix).
func IsGateways(name string) bool { return strings.HasPrefix(name, GatewayPrefix) }

// ExecutionKey is the _meta member that carries a tool's "execution"
// (taskSupport, …) from the raw tools/list result a server sent, past the
// go-sdk, whose Tool has no such field, to the registry, and from the
// gateway's served definition to the JSON written to the client, where it
// is put back as the tool's own "execution" member.
const ExecutionKey = GatewayPrefix + "execution"

// Strip deletes the protocol-reserved members of m.
func Strip(m mcp.Meta) {
	for k := range m {
		if IsReserved(k) {
			delete(m, k)
		}
	}
}

// Forwardable is m as a request of another hop may carry it: without its
// reserved members, but for the log level (a request's own, which a server
// of 2026-07-28 takes from its _meta alone, and one of an earlier version
// ignores). The go-sdk client puts its own session's protocol version,
// client info and capabilities on each request that has none, and takes the
// protocol version header from them: a downstream client's, forwarded,
// would be sent to a server that may not speak its version. m is returned
// as is if it has nothing to remove, else a copy.
func Forwardable(m mcp.Meta) mcp.Meta {
	n := 0
	for k := range m {
		if IsReserved(k) && k != mcp.MetaKeyLogLevel {
			n++
		}
	}
	if n == 0 {
		return m
	}
	if n == len(m) {
		return nil
	}
	out := make(mcp.Meta, len(m)-n)
	for k, v := range m {
		if !IsReserved(k) || k == mcp.MetaKeyLogLevel {
			out[k] = v
		}
	}
	return out
}

// MayHave reports whether the raw JSON b may hold a reserved member (a
// cheap test before StripRaw).
func MayHave(b []byte) bool { return bytes.Contains(b, prefix) }

// StripRaw removes the reserved members from the _meta of the JSON object
// obj (and _meta itself if that empties it), keeping everything else byte
// for byte. ok is false if obj or its _meta is not a JSON object.
func StripRaw(obj []byte) (out []byte, ok bool) { return AppendStripRaw(nil, obj) }

// AppendStripRaw appends obj as StripRaw returns it to dst (so that a
// message is written in one buffer); on failure it returns dst unchanged.
func AppendStripRaw(dst, obj []byte) (out []byte, ok bool) {
	var arr [8]rawjson.Member
	ms, err := rawjson.Members(arr[:0], obj)
	if err != nil {
		return dst, false
	}
	meta, found := rawjson.Find(ms, "_meta")
	if !found {
		return append(dst, obj...), true
	}
	var marr [8]rawjson.Member
	metas, err := rawjson.Members(marr[:0], meta.Value)
	if err != nil {
		return dst, false
	}
	keep := false // (any member of _meta kept)
	for _, m := range metas {
		if !bytes.HasPrefix(m.Key, prefix) {
			keep = true
			break
		}
	}
	out = append(dst, '{')
	first := true
	for _, m := range ms {
		isMeta := string(m.Key) == "_meta"
		if isMeta && !keep {
			continue
		}
		if !first {
			out = append(out, ',')
		}
		first = false
		if !isMeta {
			out = appendMember(out, m.Key, m.Value)
			continue
		}
		out = append(out, `"_meta":{`...)
		firstMeta := true
		for _, e := range metas {
			if bytes.HasPrefix(e.Key, prefix) {
				continue
			}
			if !firstMeta {
				out = append(out, ',')
			}
			firstMeta = false
			out = appendMember(out, e.Key, e.Value)
		}
		out = append(out, '}')
	}
	return append(out, '}'), true
}

// Reserved returns the reserved members of the _meta of the JSON object
// params, as raw `"k":v,…` bytes (nil if none).
func Reserved(params []byte) []byte {
	ms, err := rawjson.Members(nil, params)
	if err != nil {
		return nil
	}
	meta, ok := rawjson.Find(ms, "_meta")
	if !ok {
		return nil
	}
	mms, err := rawjson.Members(nil, meta.Value)
	if err != nil {
		return nil
	}
	return appendMembers(nil, mms, true)
}

// Without returns raw `"k":v,…` members (as Reserved returns them) without
// the member named key.
func Without(members []byte, key string) []byte {
	obj := make([]byte, 0, len(members)+2)
	obj = append(append(append(obj, '{'), members...), '}')
	ms, err := rawjson.Members(nil, obj)
	if err != nil {
		return members
	}
	var out []byte
	for _, m := range ms {
		if string(m.Key) == key {
			continue
		}
		if len(out) > 0 {
			out = append(out, ',')
		}
		out = appendMember(out, m.Key, m.Value)
	}
	return out
}

// appendMembers appends the members that are (reserved true) or are not
// reserved, comma-separated.
func appendMembers(dst []byte, ms []rawjson.Member, reserved bool) []byte {
	for _, m := range ms {
		if bytes.HasPrefix(m.Key, prefix) != reserved {
			continue
		}
		if len(dst) > 0 {
			dst = append(dst, ',')
		}
		dst = appendMember(dst, m.Key, m.Value)
	}
	return dst
}

func appendMember(dst, key, value []byte) []byte {
	dst = append(dst, '"')
	dst = append(dst, key...)
	dst = append(dst, '"', ':')
	return append(dst, value...)
}
