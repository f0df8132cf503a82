// Package scram makes PostgreSQL SCRAM-SHA-256 password verifiers.
//
// suitegen creates login roles at run time (the application role of an
// embedded server, and a role per world). Sending CREATE ROLE ... PASSWORD
// 'plain text' would put the password in the server's statement log and in
// any error report that quotes the statement; a verifier computed here is
// what PostgreSQL stores anyway, and cannot be turned back into the password.
package scram
