// Package demotest lets a test package start the demo MCP server as a real
// child process built from its own test binary.
//
//	func TestMain(m *testing.M) {
//		demoserver.RunIfChild()
//		os.Exit(m.Run())
//	}
//
//	cfg := demotest.Server("demo")
package demotest

import (
	"os"
	"time"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/internal/demoserver"
)

// Server returns an approved stdio server configuration named name that runs
// the current (test) binary as the demo server, reporting name as its
// implementation name. args are extra demo server flags.
func Server(name string, args ...string) *config.Server {
	exe, err := os.Executable()
	if err != nil {
		panic(err)
	}
	return &config.Server{
		Name: name, Transport: config.TransportStdio, Command: exe,
		Args:     append([]string{"-name", name}, args...),
		Env:      map[string]string{demoserver.ChildEnv: "1"},
		Approved: true, ConnectTimeout: 10 * time.Second,
	}
}
