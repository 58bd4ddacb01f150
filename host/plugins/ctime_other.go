//go:build unix && !linux && !darwin && !freebsd && !netbsd

package plugins

import "syscall"

func ctime(st *syscall.Stat_t) int64 { return st.Ctim.Nano() }
