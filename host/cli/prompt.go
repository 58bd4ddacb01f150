package cli

import (
	"bufio"
	"context"
	"fmt"
	"time"
)

// Terminal prompts (permission questions, elicitation forms) share stdin and
// stderr. They take turns: one prompt is on the terminal at a time, and
// waiting for the turn gives up when the prompt's context ends.
//
// A read from stdin cannot be interrupted, so a prompt whose context ends
// (the server withdrew its request, the call timed out, Ctrl-C) returns at
// once and leaves its read under way. The next prompt takes that read over
// instead of starting another: at most one goroutine reads stdin, every line
// goes to exactly one prompt, and a read abandoned by one prompt never takes
// a line away from a later one, or races with it on the shared reader.
//
// The line that completes an abandoned read was typed for the prompt that
// gave up if it arrived before the next prompt was shown: it is dropped, so
// that an answer meant for one question (say, "y") is never taken as the
// answer to another the user has not seen yet.

// lineRead is the outcome of one read of a line from stdin.
type lineRead struct {
	line string
	err  error
	at   time.Time
}

// takeTurn waits until no other prompt is on the terminal, or ctx ends.
// The caller prints its prompt and reads its answers, then calls release.
func (a *app) takeTurn(ctx context.Context) (release func(), err error) {
	a.askMu.Lock()
	if a.promptTurn == nil {
		a.promptTurn = make(chan struct{}, 1)
	}
	turn := a.promptTurn
	a.askMu.Unlock()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	select {
	case turn <- struct{}{}:
		return func() { <-turn }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// readLine reads the answer to the prompt just shown: a line of stdin
// without its line ending. It returns ctx's error as soon as ctx ends, and
// io.EOF (or the read's error) at the end of input (Ctrl-D on a terminal).
// The caller holds the turn, which also guards a.pendingRead and
// a.stdinReader.
func (a *app) readLine(ctx context.Context) (string, error) {
	shown := time.Now()
	for {
		if err := ctx.Err(); err != nil {
			return "", err
		}
		ch, inherited := a.pendingRead, a.pendingRead != nil
		if ch == nil {
			if a.stdinReader == nil {
				a.stdinReader = bufio.NewReader(a.stdin)
			}
			r := a.stdinReader
			ch = make(chan lineRead, 1)
			go func() {
				line, err := r.ReadString('\n')
				ch <- lineRead{line: line, err: err, at: time.Now()}
			}()
			a.pendingRead = ch
		}
		select {
		case <-ctx.Done():
			// The read stays pending for the next prompt.
			return "", ctx.Err()
		case res := <-ch:
			a.pendingRead = nil
			if inherited && res.err == nil && res.at.Before(shown) {
				continue // typed for a prompt that gave up
			}
			if res.err != nil && res.line == "" {
				return "", res.err
			}
			return trimEOL(res.line), nil
		}
	}
}

func trimEOL(s string) string {
	if n := len(s); n > 0 && s[n-1] == '\n' {
		s = s[:n-1]
		if n := len(s); n > 0 && s[n-1] == '\r' {
			s = s[:n-1]
		}
	}
	return s
}

// abandoned tells the user that the prompt on the terminal no longer waits
// for an answer, so that nothing typed next is taken as one.
func (a *app) abandoned(err error) {
	fmt.Fprintf(a.stderr, "\n(no longer waiting for an answer: %v)\n", err)
}
