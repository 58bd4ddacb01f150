package cli

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	hauth "github.com/mcphost/mcphost/host/auth"
)

func (a *app) authCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "auth", Short: "Log in to, log out of, and show the credentials of remote servers"}
	var noBrowser bool
	login := &cobra.Command{
		Use:   "login SERVER",
		Short: "Log in to a server with an oauth block (browser), or check a machine grant",
		Long: `Runs the server's OAuth flow. For the authorization-code grant the login URL
is printed and opened in a browser ($BROWSER if set, else the platform's
opener; --no-browser only prints it); a one-shot listener on 127.0.0.1
receives the answer. Tokens are stored in the config directory (0600 files in
a 0700 directory) and refreshed ahead of expiry.

A machine grant (client_credentials, jwt_bearer) needs no login: mcphost gets
a token whenever it connects and keeps it in memory only. For such a server
this command only checks that a token can be obtained.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			h, err := a.newHost()
			if err != nil {
				return err
			}
			defer h.Close()
			if err := h.Login(cmd.Context(), args[0], a.presenter(args[0], noBrowser)); err != nil {
				return err
			}
			if s := h.Config().Server(args[0]); s != nil && hauth.IsMachineGrant(s.OAuth) {
				// Nothing is kept: say so, rather than "logged in".
				fmt.Fprintf(a.stdout, "Obtained a token for %s with the %s grant. This grant needs no login: mcphost gets a new token whenever it connects (tokens are kept in memory only).\n", args[0], s.OAuth.Grant)
				return nil
			}
			fmt.Fprintf(a.stdout, "Logged in to %s.\n", args[0])
			return nil
		},
	}
	login.Flags().BoolVar(&noBrowser, "no-browser", false, "print the login URL without opening a browser")

	logout := &cobra.Command{
		Use:   "logout SERVER",
		Short: "Revoke a server's tokens (RFC 7009) and delete them locally",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			h, err := a.newHost()
			if err != nil {
				return err
			}
			defer h.Close()
			err = h.Logout(cmd.Context(), args[0])
			fmt.Fprintf(a.stdout, "Deleted the stored tokens of %s.\n", args[0])
			if err != nil {
				return fmt.Errorf("revocation: %w", err)
			}
			return nil
		},
	}

	var asJSON bool
	status := &cobra.Command{
		Use:   "status",
		Short: "Show each remote server's credential scheme, expiry and scopes (never a token)",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			h, err := a.newHost()
			if err != nil {
				return err
			}
			defer h.Close()
			sts := h.AuthStatuses()
			if asJSON {
				return a.writeJSON(sts)
			}
			tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "SERVER\tSCHEME\tLOGGED IN\tEXPIRES\tSCOPES")
			for _, s := range sts {
				in, exp := "no", "-"
				switch {
				case s.OnDemand && s.LoggedIn:
					in = "yes (in memory, on demand)"
				case s.OnDemand:
					in = "not needed (token on demand)"
				case s.LoggedIn && s.HasRefreshToken:
					in = "yes (refreshable)"
				case s.LoggedIn:
					in = "yes"
				}
				if !s.Expiry.IsZero() {
					exp = s.Expiry.Local().Format(time.DateTime)
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", s.Server, s.Scheme, in, exp, strings.Join(s.Scopes, " "))
			}
			return tw.Flush()
		},
	}
	status.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.AddCommand(login, logout, status)
	return cmd
}

// presenter shows a login URL: printed to stderr, then opened with
// openBrowser, after the URL passed the safety check.
func (a *app) presenter(server string, noBrowser bool) hauth.Presenter {
	return func(_ context.Context, u string) error {
		if err := hauth.CheckAuthorizationURL(u); err != nil {
			return err
		}
		fmt.Fprintf(a.stderr, "To log in to %s, open this URL in a browser:\n\n  %s\n\n", server, u)
		if noBrowser {
			return nil
		}
		if err := a.openBrowser(u); err != nil {
			fmt.Fprintf(a.stderr, "Could not open a browser (%v); open the URL yourself.\n", err)
		}
		return nil
	}
}

// openBrowser opens u, which the caller checked with
// hauth.CheckAuthorizationURL: with a.openURL if set (tests), else with
// $BROWSER (run directly with the URL as its one argument, never through a
// shell), else with the platform's opener.
func (a *app) openBrowser(u string) error {
	if a.openURL != nil {
		return a.openURL(u)
	}
	if a.lookupEnv != nil {
		if b, ok := a.lookupEnv("BROWSER"); ok && b != "" {
			if err := exec.Command(b, u).Start(); err != nil {
				return fmt.Errorf("starting $BROWSER: %w", err)
			}
			return nil
		}
	}
	return hauth.OpenBrowser(u)
}
