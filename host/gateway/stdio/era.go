package stdio

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/conn"
	"github.com/mcphost/mcphost/host/gateway"
	"github.com/mcphost/mcphost/internal/rawjson"
)

// The stdio gateway has one client, and that client says its protocol
// version in its first message. Opening the upstream sessions in that era,
// telling the servers that client's capabilities (Client.Offer),
// serves the client as the servers would serve it directly: a server's
// requests of its own during a call (elicitation, sampling, roots by
// request, which go-sdk servers refuse on a 2026-07-28 session) reach the
// client, and every tools/call of a 2025-11-25 client is relayed to a
// session of its own version, at the upstream's own cost for that era (a
// 2026-07-28 session costs a go-sdk server about a fifth more CPU per call).
// A client of 2026-07-28 or later sends no initialize, and the sessions are
// opened at the newest version both sides speak, as before.

// Client is the start of a stdio client's input, read before the
// upstream sessions are opened (see ReadClient).
type Client struct {
	// Input yields everything the client sent, its first message included:
	// serve it (Serve) in place of the original input.
	Input io.ReadCloser
	// UpstreamVersion is the protocol version to open upstream sessions at
	// (host.Options.ProtocolVersion) so that they are in the client's era:
	// for a client whose first message is an initialize request, the
	// version the gateway's answer will name (always before
	// conn.NewProtocol); "" otherwise (the newest both sides speak).
	UpstreamVersion string

	caps []byte // the initialize's capabilities
}

// Offer returns the client capabilities to offer upstream sessions opened
// at UpstreamVersion (host.Options.ClientCapabilities): of what the gateway
// can pass on (gateway), what the client said it has. A server of a
// version before conn.NewProtocol learns the client's capabilities only at
// initialize, and may choose by them (ask, or fall back); it is told what
// it would be told by the client directly. Without an UpstreamVersion it
// returns gateway: a session of conn.NewProtocol is told each call's own
// client's capabilities.
func (sc *Client) Offer(gateway *mcp.ClientCapabilities) *mcp.ClientCapabilities {
	if sc.UpstreamVersion == "" || gateway == nil {
		return gateway
	}
	var c struct {
		Roots       *mcp.RootCapabilities        `json:"roots"`
		Sampling    *mcp.SamplingCapabilities    `json:"sampling"`
		Elicitation *mcp.ElicitationCapabilities `json:"elicitation"`
		Extensions  map[string]json.RawMessage   `json:"extensions"`
	}
	out := &mcp.ClientCapabilities{}
	if json.Unmarshal(sc.caps, &c) != nil {
		return out // (the go-sdk server refuses such an initialize)
	}
	// (Sub-capabilities only as far as the gateway carries them: it passes
	// on no roots/list_changed notification, and sampling requests with
	// tools lose them in the go-sdk client's plain sampling handler.)
	if c.Roots != nil && gateway.RootsV2 != nil {
		out.RootsV2 = &mcp.RootCapabilities{}
	}
	if c.Sampling != nil && gateway.Sampling != nil {
		out.Sampling = &mcp.SamplingCapabilities{Context: c.Sampling.Context}
	}
	if e, g := c.Elicitation, gateway.Elicitation; e != nil && g != nil {
		// ({} is form elicitation, as before URL mode was added.)
		oe := &mcp.ElicitationCapabilities{}
		if (e.Form != nil || e.URL == nil) && g.Form != nil {
			oe.Form = &mcp.FormElicitationCapabilities{}
		}
		if e.URL != nil && g.URL != nil {
			oe.URL = &mcp.URLElicitationCapabilities{}
		}
		if oe.Form != nil || oe.URL != nil {
			out.Elicitation = oe
		}
	}
	// (The extensions the gateway speaks to servers for its clients, as
	// far as this client declared them.)
	for k, v := range gateway.Extensions {
		if _, ok := c.Extensions[k]; ok {
			if out.Extensions == nil {
				out.Extensions = map[string]any{}
			}
			out.Extensions[k] = v
		}
	}
	return out
}

// ReadClient reads the client's first message from in (blank lines
// before it are kept, a message longer than gateway.MaxMessageBytes is left whole to
// the gateway's own limit). It returns when that message is read, when in
// ends, or when ctx is done (then in is closed, and ctx's error returned).
func ReadClient(ctx context.Context, in io.ReadCloser) (*Client, error) {
	type read struct {
		seen []byte
		br   *bufio.Reader
		err  error
	}
	got := make(chan read, 1)
	// It ends when the message is read or in fails. (Closing in makes a
	// pending read fail where the platform can interrupt it: a terminal or
	// a blocking pipe cannot be, and the process is ending then anyway.)
	go func() {
		seen, br, err := firstLine(in)
		got <- read{seen, br, err}
	}()
	var r read
	select {
	case r = <-got:
	case <-ctx.Done():
		in.Close()
		return nil, ctx.Err()
	}
	sc := &Client{Input: replay{io.MultiReader(bytes.NewReader(r.seen), r.br), in}}
	if r.err == nil {
		sc.UpstreamVersion, sc.caps = initialize(bytes.TrimSpace(r.seen))
	}
	return sc, nil
}

// replay reads the bytes already read, then the rest of the input, and
// closes the input.
type replay struct {
	io.Reader
	io.Closer
}

// firstLine reads in up to and including the first line that is not
// blank, or up to gateway.MaxMessageBytes (err: errNoFirstLine), or to in's end or
// error (err set; what was read is returned all the same).
func firstLine(in io.Reader) (seen []byte, br *bufio.Reader, err error) {
	br = bufio.NewReaderSize(in, 64<<10)
	for {
		line, err := br.ReadSlice('\n')
		seen = append(seen, line...)
		switch {
		case len(seen) > gateway.MaxMessageBytes:
			return seen, br, errNoFirstLine
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err != nil:
			return seen, br, err
		case len(bytes.TrimSpace(seen)) > 0:
			return seen, br, nil
		}
	}
}

var errNoFirstLine = errors.New("no message within the size limit")

// initialize reads a client's first message msg: for an initialize
// request, the protocol version to open upstream sessions at (see
// Client.UpstreamVersion) — what the go-sdk server answers it with:
// the client's version when the go-sdk knows it and it is before
// conn.NewProtocol, else the latest before that — and the request's
// capabilities; for anything else, "".
func initialize(msg []byte) (version string, caps []byte) {
	var arr, parr [8]rawjson.Member
	ms, ps, err := rawjson.Message(arr[:0], parr[:0], msg)
	if err != nil {
		return "", nil
	}
	if m, ok := rawjson.Find(ms, "method"); !ok || string(m.Value) != `"initialize"` {
		return "", nil
	}
	if j, ok := rawjson.Find(ms, "jsonrpc"); !ok || string(j.Value) != `"2.0"` {
		return "", nil
	}
	if id, ok := rawjson.Find(ms, "id"); !ok {
		return "", nil
	} else if _, err := rawjson.IDKey(id.Value); err != nil {
		return "", nil // (refused by the gateway)
	}
	if c, ok := rawjson.Find(ps, "capabilities"); ok {
		caps = c.Value
	}
	if pv, ok := rawjson.Find(ps, "protocolVersion"); ok {
		if v, ok := rawjson.String(pv.Value); ok && v < conn.NewProtocol && slices.Contains(mcp.SupportedProtocolVersions(), v) {
			return v, caps
		}
	}
	return conn.LegacyProtocol, caps
}
