package world

import (
	"errors"
	"fmt"
	"strings"

	"github.com/suitegen/suitegen/internal/pgsql"
)

// ErrStatement is wrapped by errors for SQL the guard refuses to send.
var ErrStatement = errors.New("statement not allowed")

// The guard is defence in depth: what keeps a copy's SQL harmless is its
// role (see doc.go), and the tests prove that with the guard off. It stops
// early, with a clear message, what the role would refuse anyway or what
// has no business in a scenario.

// forbidden names functions a statement may not call: they change settings,
// act on other sessions, hold locks past the rollback, or reach files.
var forbidden = map[string]bool{
	"set_config": true, "pg_terminate_backend": true, "pg_cancel_backend": true, "pg_reload_conf": true,
	"pg_read_file": true, "pg_read_binary_file": true, "pg_stat_file": true,
	"lo_import": true, "lo_export": true, "lo_from_bytea": true, "lo_create": true, "lo_creat": true,
	"lo_open": true, "lowrite": true, "lo_put": true, "lo_unlink": true,
	"pg_logical_emit_message": true, "dblink": true, "dblink_exec": true,
}

func forbiddenIdent(id string) bool {
	return forbidden[id] || strings.HasPrefix(id, "pg_advisory") || strings.HasPrefix(id, "pg_try_advisory") || strings.HasPrefix(id, "pg_ls_")
}

// maxStatement is the longest statement the guard lets through.
const maxStatement = 1 << 20

var (
	readVerbs  = map[string]bool{"select": true, "with": true, "values": true, "table": true}
	writeVerbs = map[string]bool{"insert": true, "update": true, "delete": true}
)

// checkSQL enforces the statement guard: exactly one statement, starting
// with an allowed verb, naming no forbidden function. The text is split by
// the same lexer PostgreSQL's quoting rules are written into (pgsql), so
// what is inside a string literal, a dollar quote or a comment never counts,
// quoted identifiers are compared as written and Unicode-escaped ones
// (U&"..." with an optional UESCAPE) as they decode.
func checkSQL(sql string, readOnly bool) error {
	if len(sql) > maxStatement {
		return fmt.Errorf("%w: longer than %d bytes", ErrStatement, maxStatement)
	}
	toks, lexErr := pgsql.Lex(sql)
	first := ""
	for i, t := range toks {
		if i > 0 && toks[i-1].Punct(";") {
			return fmt.Errorf("%w: only one statement may be sent", ErrStatement)
		}
		if first == "" {
			first = verb(t)
		}
		if name, ok := t.Name(); ok && forbiddenIdent(name) {
			return fmt.Errorf("%w: %s may not be called", ErrStatement, name)
		}
	}
	if lexErr != nil {
		return fmt.Errorf("%w: %w", ErrStatement, lexErr)
	}
	switch {
	case first == "":
		return fmt.Errorf("%w: empty statement", ErrStatement)
	case readVerbs[first]:
		return nil
	case !readOnly && writeVerbs[first]:
		return nil
	case readOnly:
		return fmt.Errorf("%w: only SELECT, WITH, VALUES or TABLE may read the world, not %q", ErrStatement, first)
	}
	return fmt.Errorf("%w: only SELECT, WITH, VALUES, TABLE, INSERT, UPDATE or DELETE may run, not %q", ErrStatement, first)
}

// verb is how a statement's first token is named in the guard's verdict:
// only an unquoted keyword can be a verb.
func verb(t pgsql.Token) string {
	switch t.Kind {
	case pgsql.Ident:
		return t.Text
	case pgsql.QuotedIdent:
		return `"`
	case pgsql.String:
		return "'"
	}
	return t.Text
}

// plainRead reports a statement that cannot change rows by itself: its
// first word is SELECT, VALUES or TABLE (a data-changing WITH stands only
// at the top of a statement). A function it calls could, unless the schema
// defines none (see newAnswers, the one reader).
func plainRead(sql string) bool {
	toks, err := pgsql.Lex(sql)
	if err != nil || len(toks) == 0 {
		return false
	}
	switch strings.ToLower(verb(toks[0])) {
	case "select", "values", "table":
		return true
	}
	return false
}
