package lineio

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestReadLines(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 200<<10) // longer than bufio's buffer
	var got []string
	err := ReadLines(strings.NewReader("a\n\n  b  \r\n"+long+"\nlast"), 1<<20, func(m []byte) bool {
		got = append(got, string(m))
		return true
	})
	if !errors.Is(err, io.EOF) {
		t.Errorf("err = %v, want EOF", err)
	}
	if diff := cmp.Diff([]string{"a", "b", long, "last"}, got); diff != "" {
		t.Errorf("(-want +got):\n%.300s", diff)
	}
	err = ReadLines(strings.NewReader(strings.Repeat("y", 300<<10)+"\n"), 100<<10, func([]byte) bool { return true })
	if !errors.Is(err, ErrTooLong) {
		t.Errorf("over the cap: %v", err)
	}
	n := 0
	err = ReadLines(strings.NewReader("1\n2\n3\n"), 10, func([]byte) bool { n++; return n < 2 })
	if err != nil || n != 2 {
		t.Errorf("stop: err %v after %d", err, n)
	}
}

func TestWriter(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	w := NewWriter(&b)
	if err := w.WriteLine([]byte(`{"a":1}`)); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if err := w.WriteLine([]byte("x")); !errors.Is(err, io.ErrClosedPipe) {
		t.Errorf("write after close: %v", err)
	}
	if b.String() != "{\"a\":1}\n" {
		t.Errorf("wrote %q", b.String())
	}
}
