//go:build unix

package clientconf

import (
	"fmt"
	"os"
)

// syncDir makes a rename in dir durable (the directory's entry on disk).
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("syncing %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("syncing %s: %w", dir, err)
	}
	return nil
}
