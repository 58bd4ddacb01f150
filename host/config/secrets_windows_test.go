//go:build windows

package config

import "testing"

func mkfifo(t *testing.T, _ string) { t.Helper(); t.Fatal("no FIFOs on Windows") }
