package config

import "fmt"

// OwnerError reports a file or directory that belongs to neither the current
// user nor root, so mcphost will not trust it.
type OwnerError struct {
	Path string
	UID  int
}

func (e *OwnerError) Error() string {
	return fmt.Sprintf("%s belongs to another user (uid %d); only files owned by you or by root are trusted", e.Path, e.UID)
}
