package rawfd

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

func pipe(t *testing.T) (r, w io.ReadWriteCloser) {
	t.Helper()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pr.Close(); pw.Close() })
	return New(pr), New(pw)
}

func TestNewOnAPipeMakesRawCalls(t *testing.T) {
	r, w := pipe(t)
	for _, f := range []io.ReadWriteCloser{r, w} {
		_, isFile := f.(*os.File)
		if want := runtime.GOOS != "linux"; isFile != want {
			t.Errorf("New(pipe) is an *os.File: %v, want %v", isFile, want)
		}
	}
}

func TestNewOnARegularFileIsTheFile(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "f"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if got := New(f); got != io.ReadWriteCloser(f) {
		t.Errorf("New(regular file) = %T, want the file itself", got)
	}
}

func TestReadWrite(t *testing.T) {
	tests := []struct {
		name string
		size int
	}{
		{"one line", 100},
		{"more than the pipe holds (partial writes, waits)", 1 << 20},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, w := pipe(t)
			msg := bytes.Repeat([]byte("0123456789abcdef"), tt.size/16)
			werr := make(chan error, 1)
			go func() {
				n, err := w.Write(msg)
				if err == nil && n != len(msg) {
					err = io.ErrShortWrite
				}
				werr <- errors.Join(err, w.Close())
			}()
			got, err := io.ReadAll(r) // (to io.EOF once w is closed)
			if err != nil {
				t.Fatal(err)
			}
			if err := <-werr; err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, msg) {
				t.Errorf("read %d bytes, want the %d written", len(got), len(msg))
			}
		})
	}
}

func TestCloseEndsAWaitingRead(t *testing.T) {
	r, _ := pipe(t)
	done := make(chan error, 1)
	go func() {
		_, err := r.Read(make([]byte, 10))
		done <- err
	}()
	// (Whether the read waits already or starts after Close, it fails.)
	r.Close()
	if err := <-done; !errors.Is(err, os.ErrClosed) {
		t.Errorf("read after Close: %v, want os.ErrClosed", err)
	}
}

func TestWriteToAClosedReaderFails(t *testing.T) {
	r, w := pipe(t)
	r.Close()
	if _, err := w.Write([]byte("x\n")); err == nil {
		t.Error("write to a pipe without a reader: no error")
	}
}

func TestReadWriteDoNotAllocate(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("raw system calls on linux only; elsewhere New returns the *os.File")
	}
	r, w := pipe(t)
	msg, buf := []byte("a line\n"), make([]byte, 64)
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := w.Write(msg); err != nil {
			t.Fatal(err)
		}
		if _, err := r.Read(buf); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("a write and a read: %v allocations, want 0", allocs)
	}
}
