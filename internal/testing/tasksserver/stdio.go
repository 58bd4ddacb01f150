package tasksserver

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// maxLine bounds one message on stdio.
const maxLine = 16 << 20

// ServeStdio serves newline-delimited JSON-RPC from in to out until in ends
// (or a line cannot be read); ctx done cancels the requests in flight, but a
// read blocked on in returns only when in ends or is closed. The client's initialize capabilities apply to the
// session's requests that carry none in their _meta. Requests are answered
// concurrently; those still running when in ends are cancelled and waited
// for.
func (s *Server) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ss := &session{}
	var (
		wmu sync.Mutex
		wg  sync.WaitGroup
	)
	defer wg.Wait()
	defer cancel() // before the wait: in-flight calls end.
	write := func(data []byte) error {
		wmu.Lock()
		defer wmu.Unlock()
		if _, err := out.Write(append(data, '\n')); err != nil {
			return fmt.Errorf("writing to stdout: %w", err)
		}
		return nil
	}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		req, jerr := parseMessage(bytes.Clone(line))
		if jerr != nil {
			if req == nil || req.id.IsValid() {
				var id jsonrpc.ID
				if req != nil {
					id = req.id
				}
				data, err := response(id, nil, jerr)
				if err != nil {
					return err
				}
				if err := write(data); err != nil {
					return err
				}
			}
			continue
		}
		if req == nil || !req.id.IsValid() {
			continue // a response or a notification: nothing to answer.
		}
		if req.method == "initialize" {
			// Answered in order: the session's capabilities are set before
			// the requests that follow it are read.
			result, err := s.handle(ctx, ss, req)
			data, eerr := response(req.id, result, err)
			if eerr != nil {
				return eerr
			}
			if err := write(data); err != nil {
				return err
			}
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			result, err := s.handle(ctx, ss, req)
			data, eerr := response(req.id, result, err)
			if eerr == nil {
				_ = write(data) // a closed stdout ends the session by in ending.
			}
		}()
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("reading stdin: %w", err)
	}
	return nil
}
