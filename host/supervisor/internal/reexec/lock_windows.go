package reexec

import "os"

// supervise is never reached on Windows, where nothing is re-executed.
func supervise() int { return 2 }

// LockSurvivesRename is false: Windows cannot rename a directory while a
// file in it is open.
const LockSurvivesRename = false

// LockFile does nothing on Windows yet.
func LockFile(*os.File) error { return nil }

// RemoveIfStale cannot tell a dead host's directory on Windows: it keeps it.
func RemoveIfStale(string) bool { return false }
