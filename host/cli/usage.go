package cli

import (
	"errors"

	"github.com/spf13/cobra"
)

// usageError is a command line that cannot run as typed: an unknown command
// or flag, a flag without its value or with a bad one, the wrong number of
// arguments. It exits with exitConfig. Cobra's own errors for these are
// plain text; classifyUsage marks them at their source.
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

// classifyUsage makes the usage errors of root's command tree usageErrors:
// cobra's flag errors (through the flag error function, which every command
// inherits) and the errors of every command's Args validator. It adds
// cobra's help and completion commands first, so that they are covered too;
// root's output streams must be set already (the completion commands keep
// root's stdout).
//
// An unknown command under root itself is reported by cobra before any
// command runs, from a lookup with no hook to wrap its error; isUsage detects
// it by repeating that lookup.
func classifyUsage(root *cobra.Command) {
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &usageError{err} })
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		if args := c.Args; args != nil {
			c.Args = func(cmd *cobra.Command, a []string) error {
				if err := args(cmd, a); err != nil {
					return &usageError{err}
				}
				return nil
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// isUsage reports whether err, from executing root on args, is a usage
// error: one marked by classifyUsage, or a command name root does not know
// (cobra's lookup of args fails, as it did before running anything).
func isUsage(root *cobra.Command, args []string, err error) bool {
	var ue *usageError
	if errors.As(err, &ue) {
		return true
	}
	_, _, ferr := root.Find(args)
	return ferr != nil
}
