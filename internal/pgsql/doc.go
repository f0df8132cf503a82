// Package pgsql splits PostgreSQL text into tokens the way the server's own
// lexer does where it matters for deciding what a text means: which bytes are
// inside a string, a quoted identifier, a dollar quote or a comment, and what
// name an identifier spells once Unicode escapes are decoded.
//
// It is not a parser. The schema reader (pkg/contract) builds its grammar of
// CREATE TABLE on top of it, and the statement guard (pkg/world) uses it to
// count statements and find the names a statement calls. Both read text
// they did not write, so the lexer must agree with PostgreSQL on every
// boundary: a string the lexer thinks is closed while the server thinks it is
// open would let a second statement hide.
//
// Conventions assumed: standard_conforming_strings on (backslash escapes only
// in E'...' strings), the server default since PostgreSQL 9.1.
package pgsql
