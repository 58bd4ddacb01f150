// Package reexec is the supervisor side of package supervisor: the init hook
// that turns a re-executed host binary into a supervisor, the supervisor
// itself, and the wire format between the two. It imports only packages
// that are initialised early (no reflection, no encoding/json), so that its
// init function runs before most of the host's and the supervisor starts in
// a few milliseconds.
package reexec

import (
	"bufio"
	"errors"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// EnvMarker is the environment variable that makes a binary which imports
// this package run as a supervisor. Its value is the protocol version.
const EnvMarker = "MCPHOST_SUPERVISOR"

// Version is the protocol version, EnvMarker's value.
const Version = "1"

// LockName is the file in a run directory that its host holds locked for as
// long as it lives.
const LockName = ".lock"

// maxField bounds one field of a spec (a path, an argument, a variable).
const maxField = 1 << 20

// Step is one step of a stop sequence: send Signal, then wait up to Grace.
type Step struct {
	Signal syscall.Signal
	Grace  time.Duration
}

// Spec describes the program to run and how to stop it.
type Spec struct {
	// Path is the resolved path of the program (as exec.LookPath returns it). REQUIRED.
	Path string
	// Args are the program's arguments, Args[0] included. REQUIRED.
	Args []string
	// Env is the program's whole environment. OPTIONAL: empty.
	Env []string
	// Dir is the program's working directory. OPTIONAL: the host's.
	Dir string
	// Stop is the sequence sent to the program's process group and every
	// other descendant on Stop or when the host dies; SIGKILL always ends
	// it. OPTIONAL: SIGKILL at once.
	Stop []Step
	// RunDir is a run directory made with supervisor.NewRunDir. When the
	// supervisor finds the host dead (its lock free), it removes the
	// directory. OPTIONAL.
	RunDir string
}

// Encode writes a spec as length-prefixed fields ("LEN:BYTES").
func (s *Spec) Encode() []byte {
	var b []byte
	field := func(v string) {
		b = strconv.AppendInt(b, int64(len(v)), 10)
		b = append(b, ':')
		b = append(b, v...)
	}
	list := func(vs []string) {
		field(strconv.Itoa(len(vs)))
		for _, v := range vs {
			field(v)
		}
	}
	field(Version)
	field(s.Path)
	list(s.Args)
	list(s.Env)
	field(s.Dir)
	field(strconv.Itoa(len(s.Stop)))
	for _, st := range s.Stop {
		field(strconv.Itoa(int(st.Signal)))
		field(strconv.FormatInt(int64(st.Grace), 10))
	}
	field(s.RunDir)
	return b
}

var errBadSpec = errors.New("malformed supervisor spec")

// DecodeSpec reads one spec written by Encode.
func DecodeSpec(r *bufio.Reader) (*Spec, error) {
	var err error
	field := func() string {
		if err != nil {
			return ""
		}
		var n int
		for {
			var c byte
			if c, err = r.ReadByte(); err != nil {
				return ""
			}
			if c == ':' {
				break
			}
			if c < '0' || c > '9' || n > maxField {
				err = errBadSpec
				return ""
			}
			n = n*10 + int(c-'0')
		}
		if n > maxField {
			err = errBadSpec
			return ""
		}
		b := make([]byte, n)
		_, err = io.ReadFull(r, b)
		return string(b)
	}
	number := func() int {
		n, e := strconv.Atoi(field())
		if err == nil && (e != nil || n < 0) {
			err = errBadSpec
		}
		return n
	}
	list := func() []string {
		n := number()
		var vs []string
		for i := 0; i < n && err == nil; i++ {
			vs = append(vs, field())
		}
		return vs
	}
	if v := field(); err == nil && v != Version {
		return nil, errBadSpec
	}
	s := &Spec{Path: field(), Args: list(), Env: list(), Dir: field()}
	n := number()
	for i := 0; i < n && err == nil; i++ {
		s.Stop = append(s.Stop, Step{Signal: syscall.Signal(number()), Grace: time.Duration(number())})
	}
	s.RunDir = field()
	if err != nil {
		return nil, err
	}
	return s, nil
}

// Message is one line from the supervisor on the status pipe: the program's
// pid, its start error, or its wait status.
type Message struct {
	Pid    int
	Errno  int
	Error  string
	Exit   bool
	Status uint32
}

// Encode formats a message as one line.
func (m *Message) Encode() []byte {
	switch {
	case m.Exit:
		return []byte("exit " + strconv.FormatUint(uint64(m.Status), 10) + "\n")
	case m.Pid > 0:
		return []byte("pid " + strconv.Itoa(m.Pid) + "\n")
	}
	return []byte("error " + strconv.Itoa(m.Errno) + " " + strings.ReplaceAll(m.Error, "\n", " ") + "\n")
}

// ReadMessage reads one message.
func ReadMessage(r *bufio.Reader) (*Message, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return nil, err
	}
	kind, rest, _ := strings.Cut(strings.TrimSuffix(line, "\n"), " ")
	m := &Message{}
	switch kind {
	case "pid":
		m.Pid, err = strconv.Atoi(rest)
	case "exit":
		var st uint64
		st, err = strconv.ParseUint(rest, 10, 32)
		m.Exit, m.Status = true, uint32(st)
	case "error":
		errno, msg, _ := strings.Cut(rest, " ")
		m.Errno, err = strconv.Atoi(errno)
		m.Error = msg
	default:
		err = errors.New("malformed supervisor message")
	}
	if err != nil {
		return nil, err
	}
	return m, nil
}

func init() {
	if os.Getenv(EnvMarker) == Version {
		os.Exit(supervise())
	}
}
