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
type Writer struct {
	mu     sync.Mutex
	w      io.Writer
	closed bool
}

// NewWriter returns a Writer on w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// WriteLine writes msg and a newline in one write.
func (w *Writer) WriteLine(msg []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return io.ErrClosedPipe
	}
	_, err := w.w.Write(append(msg, '\n'))
	return err
}

// Close makes later writes fail; it waits for a write in progress. It does not
// close the underlying writer.
func (w *Writer) Close() {
	w.mu.Lock()
	w.closed = true
	w.mu.Unlock()
}
