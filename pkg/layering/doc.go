// Package layering holds the module's import rules, checked by its test
// over `go list` of every package: a package under internal/ is a leaf, and
// imports nothing under pkg/. Imports that predate the rule are listed by
// name in the test; the list may only shrink. docs/ARCHITECTURE.md states
// the rule.
package layering
