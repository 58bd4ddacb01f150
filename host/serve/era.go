package serve

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/conn"
	"github.com/mcphost/mcphost/internal/rawjson"
)

// The stdio gateway has one client, and that client says its protocol
// version in its first message. Opening the upstream sessions in that era
// serves the client as the servers would serve it directly: a server's
// requests of its own during a call (elicitation, sampling, roots by
// request, which go-sdk servers refuse on a 2026-07-28 session) reach the
// client, and every tools/call of a 2025-11-25 client is relayed to a
// session of its own version, at the upstream's own cost for that era (a
// 2026-07-28 session costs a go-sdk server about a fifth more CPU per call).
// A client of 2026-07-28 or later sends no initialize, and the sessions are
// opened at the newest version both sides speak, as before.

// StdioClient is the start of a stdio client's input, read before the
// upstream sessions are opened (see ReadStdioClient).
type StdioClient struct {
	// Input yields everything the client sent, its first message included:
	// serve it (ServeStdio) in place of the original input.
	Input io.ReadCloser
	// UpstreamVersion is the protocol version to open upstream sessions at
	// (host.Options.ProtocolVersion) so that they are in the client's era:
	// the version the gateway's initialize answer will name, for a client
	// whose first message is an initialize request of a version before
	// conn.NewProtocol; "" otherwise (the newest both sides speak).
	UpstreamVersion string
}

// ReadStdioClient reads the client's first message from in (blank lines
// before it are kept, a message longer than MaxMessageBytes is left whole to
// the gateway's own limit). It returns when that message is read, when in
// ends, or when ctx is done (then in is closed, and ctx's error returned).
func ReadStdioClient(ctx context.Context, in io.ReadCloser) (*StdioClient, error) {
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
	sc := &StdioClient{Input: replay{io.MultiReader(bytes.NewReader(r.seen), r.br), in}}
	if r.err == nil {
		sc.UpstreamVersion = upstreamVersion(bytes.TrimSpace(r.seen))
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
// blank, or up to MaxMessageBytes (err: errNoFirstLine), or to in's end or
// error (err set; what was read is returned all the same).
func firstLine(in io.Reader) (seen []byte, br *bufio.Reader, err error) {
	br = bufio.NewReaderSize(in, 64<<10)
	for {
		line, err := br.ReadSlice('\n')
		seen = append(seen, line...)
		switch {
		case len(seen) > MaxMessageBytes:
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

// upstreamVersion is the protocol version to open upstream sessions at for
// a client whose first message is msg (see StdioClient.UpstreamVersion):
// what the go-sdk server answers an initialize with — the client's version
// when it knows it, else the latest before 2026-07-28.
func upstreamVersion(msg []byte) string {
	var arr, parr [8]rawjson.Member
	ms, ps, err := rawjson.Message(arr[:0], parr[:0], msg)
	if err != nil {
		return ""
	}
	if m, ok := rawjson.Find(ms, "method"); !ok || string(m.Value) != `"initialize"` {
		return ""
	}
	if _, ok := rawjson.Find(ms, "id"); !ok {
		return ""
	}
	pv, ok := rawjson.Find(ps, "protocolVersion")
	if !ok {
		return ""
	}
	v, ok := rawjson.String(pv.Value)
	switch {
	case !ok || v >= conn.NewProtocol:
		return ""
	case slices.Contains(mcp.SupportedProtocolVersions(), v):
		return v
	}
	return conn.LegacyProtocol
}
