package sdk

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"runtime"
	"testing"
)

func frames(data []byte) *frameReader { return &frameReader{bufio.NewReader(bytes.NewReader(data))} }

// FuzzFrameReader: whatever a plugin writes on its data socket, the host's
// frame reader never panics, never returns a frame over MaxDataFrame, never
// allocates much more than it received, and round-trips what writeFrame
// wrote. Seeds in testdata/fuzz/FuzzFrameReader.
func FuzzFrameReader(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		r := frames(data)
		var got [][]byte
		for {
			msg, err := r.read()
			if err != nil {
				break
			}
			if len(msg) > MaxDataFrame {
				t.Fatalf("frame of %d bytes", len(msg))
			}
			got = append(got, msg)
		}
		// Whatever was read, written again, reads back the same.
		var buf bytes.Buffer
		for _, m := range got {
			if err := writeFrame(&buf, m); err != nil {
				t.Fatal(err)
			}
		}
		r = frames(buf.Bytes())
		for i, want := range got {
			m, err := r.read()
			if err != nil || !bytes.Equal(m, want) {
				t.Fatalf("frame %d: %q, %v; want %q", i, m, err, want)
			}
		}
	})
}

// TestHugeLengthPrefixDoesNotAllocate: a 4-byte header announcing the largest
// allowed frame, followed by nothing, must not make the reader allocate it.
func TestHugeLengthPrefixDoesNotAllocate(t *testing.T) {
	for _, tc := range []struct {
		name string
		n    uint32
		body int
	}{
		{"limit, no body", MaxDataFrame, 0},
		{"limit, short body", MaxDataFrame, 1000},
		{"over the limit", MaxDataFrame + 1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := binary.BigEndian.AppendUint32(nil, tc.n)
			data = append(data, make([]byte, tc.body)...)
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := frames(data).read()
			runtime.ReadMemStats(&after)
			if err == nil || errors.Is(err, io.EOF) && tc.n <= MaxDataFrame {
				t.Errorf("err = %v, want an error (and not a clean EOF)", err)
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 1<<20 {
				t.Errorf("reading a truncated frame allocated %d bytes", alloc)
			}
		})
	}
}
