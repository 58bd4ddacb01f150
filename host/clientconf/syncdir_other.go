//go:build !unix

package clientconf

// syncDir is a no-op where a directory cannot be synced (Windows: the
// rename is durable once MoveFileEx returns with the file's data synced).
func syncDir(string) error { return nil }
