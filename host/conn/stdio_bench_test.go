package conn

import (
	"io"
	"os/exec"
	"testing"
)

// BenchmarkStartProcess measures what the supervisor adds to starting a
// stdio server: re-executing the host's binary up to the supervisor's init
// hook, the spec and pid exchange, and reaping.
func BenchmarkStartProcess(b *testing.B) {
	b.Run("direct", func(b *testing.B) {
		for b.Loop() {
			if err := exec.Command("/bin/true").Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("supervised", func(b *testing.B) {
		for b.Loop() {
			p, err := startProcess("/bin/true", nil, nil, "", io.Discard)
			if err != nil {
				b.Fatal(err)
			}
			<-p.done
		}
	})
}
