package world

import (
	"errors"
	"fmt"
	"strings"
)

// ErrStatement is wrapped by errors for SQL the guard refuses to send.
var ErrStatement = errors.New("statement not allowed")

// forbiddenIdent names functions a statement may not call: set_config could
// undo the role, and session advisory locks outlive the rollback.
func forbiddenIdent(id string) bool {
	return id == "set_config" || strings.HasPrefix(id, "pg_advisory") || strings.HasPrefix(id, "pg_try_advisory")
}

var (
	readVerbs  = map[string]bool{"select": true, "with": true, "values": true, "table": true}
	writeVerbs = map[string]bool{"insert": true, "update": true, "delete": true}
)

// checkSQL enforces the statement guard: exactly one statement, starting
// with an allowed verb, naming no forbidden function. String literals,
// dollar quotes and comments are skipped, so their contents never count.
func checkSQL(sql string, readOnly bool) error {
	first := ""
	ended := false // a ; was seen
	s := sql
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f':
			i++
			continue
		case c == '-' && i+1 < len(s) && s[i+1] == '-':
			for i < len(s) && s[i] != '\n' {
				i++
			}
			continue
		case c == '/' && i+1 < len(s) && s[i+1] == '*':
			depth := 0
			for i < len(s) {
				if s[i] == '/' && i+1 < len(s) && s[i+1] == '*' {
					depth++
					i += 2
				} else if s[i] == '*' && i+1 < len(s) && s[i+1] == '/' {
					depth--
					i += 2
					if depth == 0 {
						break
					}
				} else {
					i++
				}
			}
			if depth != 0 {
				return fmt.Errorf("%w: unterminated comment", ErrStatement)
			}
			continue
		}
		if ended {
			return fmt.Errorf("%w: only one statement may be sent", ErrStatement)
		}
		switch {
		case c == ';':
			ended = true
			i++
		case c == '\'':
			end, err := skipQuoted(s, i, (i > 0 && (s[i-1] == 'e' || s[i-1] == 'E')))
			if err != nil {
				return err
			}
			i = end
		case c == '"':
			j := i + 1
			var id strings.Builder
			for {
				if j >= len(s) {
					return fmt.Errorf("%w: unterminated quoted identifier", ErrStatement)
				}
				if s[j] == '"' {
					if j+1 < len(s) && s[j+1] == '"' {
						id.WriteByte('"')
						j += 2
						continue
					}
					break
				}
				id.WriteByte(s[j])
				j++
			}
			if forbiddenIdent(id.String()) {
				return fmt.Errorf("%w: %s may not be called", ErrStatement, id.String())
			}
			if first == "" {
				first = "\""
			}
			i = j + 1
		case c == '$' && i+1 < len(s) && !isDigit(s[i+1]):
			// $tag$ ... $tag$
			j := i + 1
			for j < len(s) && isIdentByte(s[j]) && s[j] != '$' {
				j++
			}
			if j >= len(s) || s[j] != '$' {
				i = j
				continue
			}
			tag := s[i : j+1]
			end := strings.Index(s[j+1:], tag)
			if end < 0 {
				return fmt.Errorf("%w: unterminated dollar quote", ErrStatement)
			}
			i = j + 1 + end + len(tag)
		case isIdentStart(c):
			j := i
			for j < len(s) && isIdentByte(s[j]) {
				j++
			}
			word := strings.ToLower(s[i:j])
			if first == "" {
				first = word
			}
			if forbiddenIdent(word) {
				return fmt.Errorf("%w: %s may not be called", ErrStatement, word)
			}
			i = j
		default:
			if first == "" {
				first = string(c)
			}
			i++
		}
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

// skipQuoted returns the index after the string literal starting at i.
func skipQuoted(s string, i int, backslash bool) (int, error) {
	j := i + 1
	for j < len(s) {
		switch {
		case backslash && s[j] == '\\':
			j += 2
		case s[j] == '\'':
			if j+1 < len(s) && s[j+1] == '\'' {
				j += 2
				continue
			}
			return j + 1, nil
		default:
			j++
		}
	}
	return 0, fmt.Errorf("%w: unterminated string literal", ErrStatement)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isIdentStart(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}
func isIdentByte(c byte) bool { return isIdentStart(c) || isDigit(c) || c == '$' }
