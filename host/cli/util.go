package cli

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/mcphost/mcphost/host/registry"
)

func readAllLimited(r io.Reader, max int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("input is larger than %d bytes", max)
	}
	return b, nil
}

// listOutput prints a registry listing: as JSON {key: items, "problems": …}
// with --json, else as a table with the given header and rows; problems go to
// stderr as warnings. items must be a slice (nil prints as []).
func listOutput[T any](a *app, asJSON bool, key string, items []T, problems []registry.Problem, header string, row func(T) string) error {
	if asJSON {
		if items == nil {
			items = []T{}
		}
		out := map[string]any{key: items}
		if len(problems) > 0 {
			out["problems"] = problems
		}
		return a.writeJSON(out)
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, header)
	for _, it := range items {
		fmt.Fprintln(tw, row(it))
	}
	tw.Flush()
	for _, p := range problems {
		fmt.Fprintf(a.stderr, "warning: %s\n", p)
	}
	return nil
}
