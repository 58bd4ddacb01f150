//go:build !unix

package host_test

// setUmask does nothing where there is no umask.
func setUmask(int) (restore func()) { return func() {} }
