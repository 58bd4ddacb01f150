package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// openPTY opens a pseudo-terminal pair (Linux: /dev/ptmx), so that the
// confirmation's terminal check sees a real terminal.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	fd, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	master = os.NewFile(uintptr(fd), "/dev/ptmx")
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	slave, err = os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { slave.Close(); master.Close() })
	return master, slave
}

// TestClientConnectAsks: on a terminal, client connect shows the change
// and writes it only when the answer is yes.
func TestClientConnectAsks(t *testing.T) {
	for _, tt := range []struct {
		answer string
		write  bool
	}{{"y", true}, {"yes", true}, {"n", false}, {"", false}} {
		t.Run("answer="+tt.answer, func(t *testing.T) {
			dir := t.TempDir()
			master, slave := openPTY(t)
			if _, err := master.WriteString(tt.answer + "\n"); err != nil {
				t.Fatal(err)
			}
			var out, errw bytes.Buffer
			a := &app{stdin: slave, stdout: &out, stderr: &errw, workDir: dir, lookupEnv: func(k string) (string, bool) {
				if k == "HOME" {
					return dir, true
				}
				return "", false
			}}
			code := a.execute(context.Background(), []string{"client", "connect", "gemini"})
			path := filepath.Join(dir, ".gemini", "settings.json")
			_, err := os.Stat(path)
			if written := err == nil; written != tt.write || (code == 0) != tt.write {
				t.Errorf("answer %q: written %v, exit %d; want written %v\nstdout:\n%s\nstderr:\n%s", tt.answer, written, code, tt.write, &out, &errw)
			}
			if !strings.Contains(errw.String(), "Write "+path+"? [y/N] ") || !strings.Contains(out.String(), `+    "mcphost": {`) {
				t.Errorf("the change was not shown and asked for:\nstdout:\n%s\nstderr:\n%s", &out, &errw)
			}
		})
	}
}
