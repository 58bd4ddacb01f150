//go:build darwin || freebsd || netbsd

package plugins

import "syscall"

func ctime(st *syscall.Stat_t) int64 { return st.Ctimespec.Nano() }
