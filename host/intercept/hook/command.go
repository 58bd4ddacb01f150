package hook

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/mcphost/mcphost/host/config"
)

// waitDelay bounds the wait for a hook's pipes once it has exited and its
// group has been killed (a process that escaped the group may hold them).
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

// run starts the command in its own process group (a Job object on
// Windows), writes in to its stdin and closes it, and reads stdout (at
// most MaxStdout bytes: more cancels the run through cancel, killing the
// group, and is ErrOutputTooLarge) and stderr (the first MaxStderr bytes
// kept). ctx ending kills the group; so does the command's exit: whatever
// it started in the background does not outlive it (nor holds its pipes,
// which would make the call wait).
//
// The pipes are the run's own, not exec.Cmd's: Cmd.Wait would wait for
// them (up to WaitDelay) before the group could be killed.
func (c *command) run(ctx context.Context, cancel context.CancelFunc, in []byte) (output, error) {
	out := output{exit: -1}
	cmd := exec.Command(c.argv[0], c.argv[1:]...)
	rawCommandLine(cmd)
	cmd.Env = c.env
	cmd.Dir = c.dir
	var p pipes
	if err := p.open(); err != nil {
		return out, fmt.Errorf("cannot run %s: %w", c.argv[0], err)
	}
	defer p.closeAll()
	cmd.Stdin, cmd.Stdout, cmd.Stderr = p.inR, p.outW, p.errW
	ownGroup(cmd)
	if err := cmd.Start(); err != nil {
		return out, fmt.Errorf("cannot run %s: %w", c.argv[0], err)
	}
	p.closeChildEnds()
	g := attachGroup(cmd)
	defer g.close()

	stdout := &capped{max: MaxStdout, over: cancel}
	stderr := &capped{max: MaxStderr}
	var wg sync.WaitGroup
	wg.Go(func() {
		_, _ = p.inW.Write(in) // a hook that does not read its input: EPIPE once it is gone
		_ = p.inW.Close()
	})
	wg.Go(func() { _, _ = io.Copy(stdout, p.outR) })
	wg.Go(func() { _, _ = io.Copy(stderr, p.errR) })

	// The watcher kills the group when ctx ends first; it is stopped
	// (and waited for) as soon as the command has exited.
	stop, watched := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(watched)
		select {
		case <-ctx.Done():
			g.kill()
		case <-stop:
		}
	}()
	err := cmd.Wait()
	close(stop)
	<-watched
	g.kill() // whatever it left running

	if !p.drain(&wg) {
		// Something outside the group still holds a pipe: the buffers
		// belong to the copiers until they return, so report nothing.
		return out, fmt.Errorf("its output pipes stayed open after it exited and its processes were killed")
	}
	out.stdout, out.stderr = stdout.Bytes(), stderr.Bytes()
	if cmd.ProcessState != nil {
		out.exit = cmd.ProcessState.ExitCode()
	}
	var ee *exec.ExitError
	switch {
	case stdout.exceeded:
		return out, fmt.Errorf("wrote more than %d bytes to stdout: %w", MaxStdout, ErrOutputTooLarge)
	case ctx.Err() != nil:
		return out, ctx.Err()
	case err == nil:
		return out, nil
	case errors.As(err, &ee) && out.exit >= 0:
		return out, nil
	case errors.As(err, &ee):
		return out, fmt.Errorf("killed: %s", strings.TrimSpace(ee.ProcessState.String()))
	}
	return out, fmt.Errorf("cannot run %s: %w", c.argv[0], err)
}

// pipes are a run's stdin, stdout and stderr: the child's ends (inR,
// outW, errW) and the run's.
type pipes struct {
	inR, inW, outR, outW, errR, errW *os.File
}

func (p *pipes) open() error {
	var err error
	if p.inR, p.inW, err = os.Pipe(); err != nil {
		return err
	}
	if p.outR, p.outW, err = os.Pipe(); err != nil {
		return err
	}
	p.errR, p.errW, err = os.Pipe()
	return err
}

// closeChildEnds closes the child's ends in this process, once it has
// them: its exit (and its group's) then ends the reads.
func (p *pipes) closeChildEnds() {
	for _, f := range []*os.File{p.inR, p.outW, p.errW} {
		if f != nil {
			_ = f.Close()
		}
	}
}

// closeAll closes every end (closing one twice is harmless).
func (p *pipes) closeAll() {
	for _, f := range []*os.File{p.inR, p.inW, p.outR, p.outW, p.errR, p.errW} {
		if f != nil {
			_ = f.Close()
		}
	}
}

// drain waits for the copiers, at most waitDelay; then it closes the
// run's ends, which ends them, and waits waitDelay more. It reports
// whether they returned.
func (p *pipes) drain(wg *sync.WaitGroup) bool {
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	t := time.NewTimer(waitDelay)
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-t.C:
	}
	p.closeAll()
	t.Reset(waitDelay)
	select {
	case <-done:
		return true
	case <-t.C:
		return false
	}
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
