// Package layering holds the module's import rules, checked by its test
// over `go list` of every package: a package under internal/ is a leaf, and
// imports no package of this module. docs/ARCHITECTURE.md states the rule.
package layering
