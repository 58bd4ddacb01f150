package conn

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/supervisor"
	"github.com/mcphost/mcphost/internal/rawfd"
)

// Shutdown escalation for stdio servers: after stdin is closed the process
// group gets SIGINT, then SIGTERM after sigintGrace, then SIGKILL after
// sigtermGrace: at most 600 ms in all.
const (
	sigintGrace  = 100 * time.Millisecond
	sigtermGrace = 400 * time.Millisecond
	// stderrTail is how much of a server's stderr is kept for diagnostics.
	stderrTail = 16 << 10
)

// DefaultMaxMessageBytes caps one JSON-RPC message read from a stdio server.
const DefaultMaxMessageBytes = 4 << 20

// stdioTransport starts a server process in its own process group and speaks
// newline-delimited JSON-RPC over its stdin/stdout (through the go-sdk's
// IOTransport). Closing the connection shuts the whole group down.
type stdioTransport struct {
	command string
	args    []string
	env     []string
	dir     string
	maxMsg  int
	stderr  *tailBuffer
	// onStart, if set, is told the process id (for tests and status).
	onStart func(pid int)
	// proc is the started process, once Connect succeeded in starting it.
	proc *process
	// conn is the connection Connect returned.
	conn *lineConn
	// route routes the notifications read (Conn.routeNote); sent sees
	// each message the go-sdk client writes, before it is written.
	route func(jsonrpc.Message) jsonrpc.Message
	sent  func(jsonrpc.Message)
	// log is told of the lines on the server's stdout that are skipped.
	log hclog.Logger
}

func (t *stdioTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	p, err := startProcess(t.command, t.args, t.env, t.dir, t.stderr)
	if err != nil {
		return nil, err
	}
	t.proc = p
	if t.onStart != nil {
		t.onStart(p.pid)
	}
	t.conn = newLineConn(p.stdout, p, t.maxMsg, t.route, t.log)
	t.conn.sent = t.sent
	return t.conn, nil
}

// process is a running stdio server. Its Write and Close make it the
// io.WriteCloser half of the connection: Close ends the process.
type process struct {
	// pid is the server's process id, and its process group's.
	pid int
	sup *supervisor.Process
	// stdin and stdout are the pipes' ends, read and written with raw
	// system calls where possible (rawfd.New).
	stdin  io.WriteCloser
	stdout io.ReadCloser
	done   chan struct{} // closed when the server's tree has exited and been reaped
	err    error         // exit error (nil, *supervisor.ExitError, …), valid after done
	// stderrDone is closed when the process's stderr has been read to the end.
	stderrDone chan struct{}

	closeOnce sync.Once
	closeErr  error
}

// stopSequence is what a stdio server gets on Close, and when the host dies.
var stopSequence = []supervisor.Step{
	{Signal: syscall.SIGINT, Grace: sigintGrace},
	{Signal: syscall.SIGTERM, Grace: sigtermGrace},
	{Signal: syscall.SIGKILL, Grace: time.Second},
}

// startProcess starts a server under a supervisor (see package supervisor):
// in its own process group, and with nothing of its tree outliving the host,
// even if the host is killed.
func startProcess(command string, args, env []string, dir string, stderr io.Writer) (_ *process, err error) {
	// Resolved here, against the host's PATH, as exec.Command does.
	cmd := exec.Command(command, args...)
	if cmd.Err != nil {
		return nil, fmt.Errorf("starting %s: %w", command, cmd.Err)
	}
	var files []*os.File
	closeAll := func() {
		for _, f := range files {
			f.Close()
		}
	}
	pipe := func() (r, w *os.File) {
		if err != nil {
			return nil, nil
		}
		r, w, err = os.Pipe()
		files = append(files, r, w)
		return r, w
	}
	inR, inW := pipe()
	outR, outW := pipe()
	errR, errW := pipe()
	if err != nil {
		closeAll()
		return nil, fmt.Errorf("creating pipes: %w", err)
	}
	if env == nil {
		env = []string{}
	}
	sup, err := supervisor.Start(&supervisor.Spec{Path: cmd.Path, Args: cmd.Args, Env: env, Dir: dir, Stop: stopSequence}, inR, outW, errW)
	if err != nil {
		closeAll()
		return nil, fmt.Errorf("starting %s: %w", command, err)
	}
	// The server has its ends now.
	inR.Close()
	outW.Close()
	errW.Close()

	stderrDone := make(chan struct{})
	p := &process{pid: sup.Pid, sup: sup, stdin: rawfd.New(inW), stdout: rawfd.New(outR), done: make(chan struct{}), stderrDone: stderrDone}
	go func() { // owned by the process: ends when the group's stderr closes
		defer close(stderrDone)
		io.Copy(stderr, errR)
		errR.Close()
	}()
	go func() { // owned by the process: ends when it exits
		<-sup.Done()
		p.err = sup.Err()
		close(p.done)
		// If something outside the tree still holds stdout, unblock the reader.
		select {
		case <-stderrDone:
		case <-time.After(2 * time.Second):
			errR.Close()
		}
		time.AfterFunc(2*time.Second, func() { outR.Close() })
	}()
	return p, nil
}

// Write sends bytes to the server's stdin.
func (p *process) Write(b []byte) (int, error) {
	select {
	case <-p.done:
		return 0, fmt.Errorf("server process exited: %v", p.exitStatus())
	default:
	}
	return p.stdin.Write(b)
}

// Close shuts the server down: close stdin, then its supervisor sends SIGINT,
// SIGTERM and SIGKILL to its process group (and to descendants that left it)
// with the graces above, and reaps the tree.
func (p *process) Close() error {
	p.closeOnce.Do(func() {
		p.stdin.Close()
		p.sup.Stop()
		var total time.Duration
		for _, st := range stopSequence {
			total += st.Grace
		}
		t := time.NewTimer(total + time.Second)
		defer t.Stop()
		select {
		case <-p.done:
		case <-t.C:
			p.sup.Kill()
			p.closeErr = errors.New("server process did not exit after SIGKILL")
		}
	})
	return p.closeErr
}

func (p *process) exitStatus() string {
	if p.err == nil {
		return "exit status 0"
	}
	return p.err.Error()
}

// settle waits, up to max, for a failed server to exit and its stderr to be
// read, so that the error shown to the user includes what it printed.
func (p *process) settle(max time.Duration) {
	timer := time.NewTimer(max)
	defer timer.Stop()
	select {
	case <-p.done:
	case <-timer.C:
		return
	}
	select {
	case <-p.stderrDone:
	case <-timer.C:
	}
}
