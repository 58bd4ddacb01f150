package cli

import (
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/mcphost/mcphost/host"

	"github.com/mcphost/mcphost/host/registry"
)

func (a *app) resourcesCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "resources", Short: "List and read the servers' resources"}
	var asJSON bool
	var server string
	list := &cobra.Command{
		Use:   "list",
		Short: "List resources of every active server (or one)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			h, err := a.newHost()
			if err != nil {
				return err
			}
			defer h.Close()
			rs, problems := h.Resources(cmd.Context(), server)
			return listOutput(a, asJSON, "resources", rs, problems, "SERVER\tURI\tNAME\tMIME TYPE", func(r *registry.Resource) string {
				return fmt.Sprintf("%s\t%s\t%s\t%s", r.Server, r.URI, r.Name, r.MIMEType)
			})
		},
	}
	list.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	list.Flags().StringVar(&server, "server", "", "only this server's resources")

	var readJSON bool
	var readServer string
	read := &cobra.Command{
		Use:   "read URI",
		Short: "Read a resource: text is printed, blobs are decoded and saved to a file",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			h, err := a.newHost()
			if err != nil {
				return err
			}
			defer h.Close()
			contents, err := h.ReadResource(cmd.Context(), readServer, args[0])
			if err != nil {
				return err
			}
			if readJSON {
				return a.writeJSON(contents)
			}
			for _, c := range contents {
				switch {
				case c.File != "":
					kind := "Blob"
					if strings.HasPrefix(c.MIMEType, "image/") {
						kind = "Image"
					}
					fmt.Fprintf(a.stdout, "[%s: %s, %d bytes] saved to %s\n", kind, c.MIMEType, len(c.Blob), c.File)
				default:
					fmt.Fprintln(a.stdout, c.Text)
				}
			}
			return nil
		},
	}
	read.Flags().BoolVar(&readJSON, "json", false, "print JSON")
	read.Flags().StringVar(&readServer, "server", "", "the server to read from (default: the one that lists the URI)")
	cmd.AddCommand(list, read)
	return cmd
}

func (a *app) promptsCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "prompts", Short: "List and get the servers' prompts"}
	var asJSON bool
	list := &cobra.Command{
		Use:   "list",
		Short: "List the prompts of every active server",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			h, err := a.newHost()
			if err != nil {
				return err
			}
			defer h.Close()
			ps, problems := h.Prompts(cmd.Context())
			return listOutput(a, asJSON, "prompts", ps, problems, "NAME\tSERVER\tARGUMENTS\tDESCRIPTION", func(p *registry.Prompt) string {
				var args []string
				for _, arg := range p.Arguments {
					n := arg.Name
					if arg.Required {
						n += "*"
					}
					args = append(args, n)
				}
				return fmt.Sprintf("%s\t%s\t%s\t%s", p.Name, p.Server, strings.Join(args, ","), clip(firstLine(p.Description), 60))
			})
		},
	}
	list.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	var getJSON bool
	get := &cobra.Command{
		Use:   "get NAME [KEY=VALUE...]",
		Short: "Get a prompt by registry name with arguments",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			pargs := map[string]string{}
			for _, kv := range args[1:] {
				k, v, ok := strings.Cut(kv, "=")
				if !ok || k == "" {
					fmt.Fprintf(a.stderr, "Error: prompt arguments are KEY=VALUE, got %q\n", kv)
					return exitErr{exitConfig}
				}
				pargs[k] = v
			}
			h, err := a.newHost()
			if err != nil {
				return err
			}
			defer h.Close()
			res, err := h.GetPrompt(cmd.Context(), args[0], pargs)
			if err != nil {
				return err
			}
			if getJSON {
				return a.writeJSON(res)
			}
			for _, m := range res.Messages {
				fmt.Fprintf(a.stdout, "%s: %s\n", m.Role, host.TextOf([]mcp.Content{m.Content}))
			}
			return nil
		},
	}
	get.Flags().BoolVar(&getJSON, "json", false, "print JSON")
	cmd.AddCommand(list, get)
	return cmd
}
