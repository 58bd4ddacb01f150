//go:build !unix

package auth

// setUmask does nothing where there is no umask.
func setUmask(int) (restore func()) { return func() {} }
