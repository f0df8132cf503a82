// Package layering holds the module's import rules, checked by its test
// over `go list` of every package: a package under internal/ is a leaf, and
// imports no package of this module; and every package of internal/,
// proto/, pkg/ and cmd/ sits on one layer of docs/ARCHITECTURE.md's layer
// table and imports nothing above it. The document states both rules.
package layering
