package reexec

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
)

// prSetChildSubreaper is PR_SET_CHILD_SUBREAPER from <linux/prctl.h>.
const prSetChildSubreaper = 36

// becomeSubreaper makes orphaned descendants the supervisor's children
// instead of PID 1's, so that the final sweep finds and reaps them.
func becomeSubreaper() {
	syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0)
}

// childAttr runs the program in its own process group, killed if the
// supervisor itself is killed.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

func dup2(from, to int) error { return syscall.Dup3(from, to, 0) }

type proc struct{ pid, pgid int }

// descendants lists every live or zombie descendant of the calling process,
// read from /proc.
func descendants() []proc {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	type info struct{ ppid, pgid int }
	all := make(map[int]info, len(entries))
	children := map[int][]int{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		ppid, pgid, ok := readStat(pid)
		if !ok {
			continue
		}
		all[pid] = info{ppid, pgid}
		children[ppid] = append(children[ppid], pid)
	}
	var out []proc
	queue := []int{os.Getpid()}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			out = append(out, proc{c, all[c].pgid})
			queue = append(queue, c)
		}
	}
	return out
}

// readStat returns a process's parent and process group from /proc/PID/stat.
func readStat(pid int) (ppid, pgid int, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, false
	}
	// "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, false
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 3 {
		return 0, 0, false
	}
	ppid, err1 := strconv.Atoi(string(f[1]))
	pgid, err2 := strconv.Atoi(string(f[2]))
	return ppid, pgid, err1 == nil && err2 == nil
}
