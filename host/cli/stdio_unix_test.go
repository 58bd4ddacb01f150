//go:build unix

package cli

import (
	"io"
	"os"
	"testing"
	"time"
)

// TestPollable: a blocking pipe (as a client hands the gateway its stdin)
// becomes a file the runtime's poller serves: a read waiting on it ends
// when the file is closed, as ReadStdioClient needs when the gateway stops
// before its client said anything. A regular file is left as it is.
func TestPollable(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	r.Fd() // As stdin is: a descriptor in blocking mode (Fd sets it so).
	p := pollable(r)
	if p == io.ReadWriteCloser(r) {
		t.Fatal("a pipe was not made pollable")
	}
	read := make(chan error, 1)
	go func() {
		_, err := p.Read(make([]byte, 1))
		read <- err
	}()
	time.Sleep(50 * time.Millisecond) // (by then the read is waiting, mostly; one that starts after the close fails at once)
	p.Close()
	select {
	case err := <-read:
		if err == nil {
			t.Fatal("read on a closed file succeeded")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("closing the file did not end the read waiting on it")
	}

	f, err := os.CreateTemp(t.TempDir(), "regular")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if pollable(f) != io.ReadWriteCloser(f) {
		t.Error("a regular file was replaced")
	}
}
