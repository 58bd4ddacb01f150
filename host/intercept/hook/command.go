package hook

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/mcphost/mcphost/host/config"
)

// waitDelay bounds the wait for a hook's pipes once it has exited or been
// killed (a background child it left may hold them).
const waitDelay = time.Second

// command is a command hook: its shell's argv, environment and directory.
type command struct {
	argv []string
	env  []string
	dir  string
}

func newCommand(h *config.Hook, dir string, lookup func(string) (string, bool)) (*command, error) {
	argv, err := shellArgv(h.Shell, h.Command, lookup)
	if err != nil {
		return nil, err
	}
	return &command{argv: argv, env: childEnv(lookup, h.InheritEnv, h.Env, dir), dir: dir}, nil
}

// run starts the command in its own process group, writes in to its stdin
// and closes it, and reads stdout (at most MaxStdout bytes: more cancels
// the run through cancel, killing the group, and is ErrOutputTooLarge) and
// stderr (the first MaxStderr bytes kept). ctx ending kills the group.
func (c *command) run(ctx context.Context, cancel context.CancelFunc, in []byte) (output, error) {
	cmd := exec.CommandContext(ctx, c.argv[0], c.argv[1:]...)
	rawCommandLine(cmd)
	cmd.Env = c.env
	cmd.Dir = c.dir
	cmd.Stdin = bytes.NewReader(in)
	stdout := &capped{max: MaxStdout, over: cancel}
	stderr := &capped{max: MaxStderr}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	// Its own process group, so a timeout kills whatever it started too.
	ownGroup(cmd)
	cmd.WaitDelay = waitDelay
	err := cmd.Run()
	out := output{stdout: stdout.Bytes(), stderr: stderr.Bytes(), exit: -1}
	if cmd.ProcessState != nil {
		out.exit = cmd.ProcessState.ExitCode()
	}
	var ee *exec.ExitError
	switch {
	case stdout.exceeded:
		return out, fmt.Errorf("wrote more than %d bytes to stdout: %w", MaxStdout, ErrOutputTooLarge)
	case ctx.Err() != nil:
		return out, ctx.Err()
	case err == nil, errors.Is(err, exec.ErrWaitDelay) && out.exit >= 0:
		return out, nil
	case errors.As(err, &ee) && out.exit >= 0:
		return out, nil
	case errors.As(err, &ee):
		return out, fmt.Errorf("killed: %s", strings.TrimSpace(ee.ProcessState.String()))
	}
	return out, fmt.Errorf("cannot run %s: %w", c.argv[0], err)
}

// capped keeps at most max bytes. Past max it notes that more came and
// calls over, if set; the rest is discarded. The buffer is not embedded:
// its ReadFrom would let io.Copy bypass the cap.
type capped struct {
	buf      bytes.Buffer
	max      int
	exceeded bool
	over     func()
}

func (b *capped) Write(p []byte) (int, error) {
	if room := b.max - b.buf.Len(); len(p) > room {
		if room > 0 {
			b.buf.Write(p[:room])
		}
		if !b.exceeded {
			b.exceeded = true
			if b.over != nil {
				b.over()
			}
		}
		return len(p), nil
	}
	return b.buf.Write(p)
}

// Bytes returns what was kept.
func (b *capped) Bytes() []byte { return b.buf.Bytes() }
