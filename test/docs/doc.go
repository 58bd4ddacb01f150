// Package docs holds the tests of the repository's documentation: README.md,
// CHANGELOG.md and docs/ link only to files of the repository
// (links_test.go), and every command block of README.md runs as written
// (readme_test.go). The CLI reference in docs/cli is checked by
// internal/testing/clidocs.
package docs
