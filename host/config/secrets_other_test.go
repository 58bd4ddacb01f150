//go:build !unix

package config

import "testing"

func mkfifo(t *testing.T, _ string) { t.Helper(); t.Fatal("no FIFOs here") }

// unixLike: Unix permissions, links and FIFOs are not tested here.
const unixLike = false
