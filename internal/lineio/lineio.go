// Package lineio reads and writes newline-delimited messages (JSON-RPC over
// stdio) with a size cap and without a fixed-size scanner buffer.
package lineio

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"sync"
)

// ErrTooLong is returned by ReadLines for a message longer than its cap.
var ErrTooLong = errors.New("message exceeds the size limit")

// ReadLines reads newline-delimited messages from r and calls fn with each
// non-blank one, with surrounding white space trimmed. fn owns the slice it is
// given. ReadLines returns nil when fn returns false, ErrTooLong for a message
// longer than max bytes, and otherwise the read error that ended it (io.EOF at
// the end of the stream). A message is never buffered beyond max+64 KiB.
func ReadLines(r io.Reader, max int, fn func(msg []byte) bool) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var long []byte
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			if len(long)+len(line) > max {
				return ErrTooLong
			}
			long = append(long, line...)
			continue
		}
		if len(long) > 0 {
			line, long = append(long, line...), nil
		}
		if msg := bytes.TrimSpace(line); len(msg) > max {
			return ErrTooLong
		} else if len(msg) > 0 && !fn(bytes.Clone(msg)) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// Writer writes whole lines to an underlying writer. WriteLine may be called
// concurrently; after Close it fails with io.ErrClosedPipe.
//
// Concurrent lines are combined: while one caller is writing, others append
// their lines to a buffer and return, and the writing caller writes what
// accumulated in one more write before it returns. Under load that is one
// system call for several messages, with no goroutine of its own. A write
// error is returned to the caller that met it and to every later caller.
type Writer struct {
	mu      sync.Mutex
	w       io.Writer
	buf     []byte // lines waiting for the active writer
	spare   []byte
	writing bool
	closed  bool
	err     error
	drained *sync.Cond
}

// NewWriter returns a Writer on w.
func NewWriter(w io.Writer) *Writer {
	lw := &Writer{w: w}
	lw.drained = sync.NewCond(&lw.mu)
	return lw
}

// WriteLine writes msg and a newline.
func (w *Writer) WriteLine(msg []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return io.ErrClosedPipe
	}
	if w.err != nil {
		return w.err
	}
	w.buf = append(append(w.buf, msg...), '\n')
	if w.writing {
		return nil // the active writer takes it along
	}
	w.writing = true
	for len(w.buf) > 0 && w.err == nil {
		b := w.buf
		w.buf = w.spare[:0]
		w.mu.Unlock()
		_, err := w.w.Write(b)
		w.mu.Lock()
		w.spare = b
		if err != nil {
			w.err = err
		}
	}
	w.writing = false
	w.drained.Broadcast()
	return w.err
}

// Close makes later writes fail. It waits for lines already accepted to be
// written. It does not close the underlying writer.
func (w *Writer) Close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for w.writing {
		w.drained.Wait()
	}
	w.closed = true
}
