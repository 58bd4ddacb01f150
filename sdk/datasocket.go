package sdk

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/hashicorp/go-plugin"
)

// The data socket is the lean lane for a transport connection's messages:
// instead of one gRPC stream frame per JSON-RPC message (HTTP/2 framing, TLS,
// and goroutine hand-offs on both ends), messages cross a unix socket in the
// host's private socket directory as length-prefixed frames. The gRPC stream
// stays open for Close and Error. A connection on the socket is accepted only
// with the one-time 32-byte token the plugin sent in Opened, over the mutually
// authenticated gRPC channel.

// MaxDataFrame bounds one message on the data socket.
const MaxDataFrame = 64 << 20

const tokenLen = 32

// DataSocketSetter is implemented by the host's transport clients. The host
// calls SetDataSocketDir with the socket directory it gave the plugin
// (PLUGIN_UNIX_SOCKET_DIR) to let connections use a data socket there; a
// socket the plugin names anywhere else is refused.
type DataSocketSetter interface {
	SetDataSocketDir(dir string)
}

// dataListener is the plugin's data socket listener, created on first use.
type dataListener struct {
	once sync.Once
	err  error
	path string

	mu      sync.Mutex
	waiting map[string]chan net.Conn // hex token -> the connection that presents it
}

func (d *dataListener) start() error {
	d.once.Do(func() {
		dir := os.Getenv(plugin.EnvUnixSocketDir)
		if dir == "" {
			d.err = errors.New("no socket directory from the host")
			return
		}
		var rnd [8]byte
		rand.Read(rnd[:])
		d.path = filepath.Join(dir, "data-"+hex.EncodeToString(rnd[:]))
		ln, err := net.Listen("unix", d.path)
		if err != nil {
			d.err = err
			return
		}
		d.waiting = map[string]chan net.Conn{}
		go d.accept(ln) // lives as long as the plugin process
	})
	return d.err
}

func (d *dataListener) accept(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			var tok [tokenLen]byte
			c.SetReadDeadline(time.Now().Add(5 * time.Second))
			if _, err := io.ReadFull(c, tok[:]); err != nil {
				c.Close()
				return
			}
			c.SetReadDeadline(time.Time{})
			d.mu.Lock()
			ch, ok := d.waiting[hex.EncodeToString(tok[:])]
			delete(d.waiting, hex.EncodeToString(tok[:]))
			d.mu.Unlock()
			if !ok {
				c.Close() // unknown token: not ours to serve
				return
			}
			ch <- c
		}()
	}
}

// expect registers a fresh token and returns it with the channel on which
// the connection presenting it arrives.
func (d *dataListener) expect() ([]byte, chan net.Conn) {
	tok := make([]byte, tokenLen)
	rand.Read(tok)
	ch := make(chan net.Conn, 1)
	d.mu.Lock()
	d.waiting[hex.EncodeToString(tok)] = ch
	d.mu.Unlock()
	return tok, ch
}

func (d *dataListener) forget(tok []byte) {
	d.mu.Lock()
	delete(d.waiting, hex.EncodeToString(tok))
	d.mu.Unlock()
}

// dialData connects to a plugin's data socket and presents the token.
func dialData(dir, path string, token []byte) (net.Conn, error) {
	if dir == "" || filepath.Dir(path) != filepath.Clean(dir) {
		return nil, fmt.Errorf("the plugin offered a data socket outside the host's directory: %s", path)
	}
	if len(token) != tokenLen {
		return nil, errors.New("the plugin offered an invalid data socket token")
	}
	c, err := net.DialTimeout("unix", path, 5*time.Second)
	if err != nil {
		return nil, err
	}
	if _, err := c.Write(token); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// frameReader reads length-prefixed frames.
type frameReader struct{ r *bufio.Reader }

func newFrameReader(c net.Conn) *frameReader { return &frameReader{bufio.NewReaderSize(c, 64<<10)} }

func (f *frameReader) read() ([]byte, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(f.r, hdr[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(hdr[:])
	if n > MaxDataFrame {
		return nil, fmt.Errorf("data frame of %d bytes exceeds the limit of %d", n, MaxDataFrame)
	}
	if n <= frameChunk {
		b := make([]byte, n)
		if _, err := io.ReadFull(f.r, b); err != nil {
			return nil, err
		}
		return b, nil
	}
	// A large frame grows with what actually arrives: a length prefix alone
	// (4 bytes) must not make the reader allocate up to MaxDataFrame.
	var buf bytes.Buffer
	buf.Grow(frameChunk)
	if _, err := io.CopyN(&buf, f.r, int64(n)); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return buf.Bytes(), nil
}

// frameChunk is the largest frame read into a buffer of its announced size.
const frameChunk = 64 << 10

// writeFrame writes one length-prefixed frame in a single write.
func writeFrame(w io.Writer, msg []byte) error {
	if len(msg) > MaxDataFrame {
		return fmt.Errorf("message of %d bytes exceeds the limit of %d", len(msg), MaxDataFrame)
	}
	b := make([]byte, 4+len(msg))
	binary.BigEndian.PutUint32(b, uint32(len(msg)))
	copy(b[4:], msg)
	_, err := w.Write(b)
	return err
}

// frameWriter writes frames with concurrent writes combined: while one caller
// writes, others append their frames and return; the writing caller writes
// what accumulated before it returns (one system call for several messages
// under load). A write error is returned to the caller that met it and to
// every later caller.
type frameWriter struct {
	mu      sync.Mutex
	w       io.Writer
	buf     []byte
	spare   []byte
	writing bool
	err     error
}

func (f *frameWriter) write(msg []byte) error {
	if len(msg) > MaxDataFrame {
		return fmt.Errorf("message of %d bytes exceeds the limit of %d", len(msg), MaxDataFrame)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return f.err
	}
	f.buf = binary.BigEndian.AppendUint32(f.buf, uint32(len(msg)))
	f.buf = append(f.buf, msg...)
	if f.writing {
		return nil
	}
	f.writing = true
	for len(f.buf) > 0 && f.err == nil {
		b := f.buf
		f.buf = f.spare[:0]
		f.mu.Unlock()
		_, err := f.w.Write(b)
		f.mu.Lock()
		f.spare = b
		if err != nil {
			f.err = err
		}
	}
	f.writing = false
	return f.err
}
