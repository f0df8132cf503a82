package world

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
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
// with an allowed verb, naming no forbidden function. String literals,
// dollar quotes and comments are skipped, so their contents never count.
//
// Quoted identifiers are compared as written, Unicode-escaped ones
// (U&"..." with an optional UESCAPE) as they decode.
func checkSQL(sql string, readOnly bool) error {
	if len(sql) > maxStatement {
		return fmt.Errorf("%w: longer than %d bytes", ErrStatement, maxStatement)
	}
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
			id, end, err := quotedIdent(s, i)
			if err != nil {
				return err
			}
			if forbiddenIdent(id) {
				return fmt.Errorf("%w: %s may not be called", ErrStatement, id)
			}
			if first == "" {
				first = "\""
			}
			i = end
		case (c == 'u' || c == 'U') && i+2 < len(s) && s[i+1] == '&' && (s[i+2] == '"' || s[i+2] == '\''):
			// U&"..." or U&'...', then maybe UESCAPE 'c'.
			var raw string
			var end int
			var err error
			if s[i+2] == '"' {
				raw, end, err = quotedIdent(s, i+2)
			} else {
				end, err = skipQuoted(s, i+2, false)
			}
			if err != nil {
				return err
			}
			esc := byte('\\')
			if e, after, ok := uescape(s, end); ok {
				esc, end = e, after
			}
			if s[i+2] == '"' {
				id, err := unescapeUnicode(raw, esc)
				if err != nil {
					return err
				}
				if forbiddenIdent(id) {
					return fmt.Errorf("%w: %s may not be called", ErrStatement, id)
				}
			}
			if first == "" {
				first = string(s[i+2])
			}
			i = end
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

// quotedIdent reads the quoted identifier starting at s[i] == '"' and
// returns it ("" undoubled) and the index after it.
func quotedIdent(s string, i int) (string, int, error) {
	var id strings.Builder
	for j := i + 1; ; {
		if j >= len(s) {
			return "", 0, fmt.Errorf("%w: unterminated quoted identifier", ErrStatement)
		}
		if s[j] == '"' {
			if j+1 < len(s) && s[j+1] == '"' {
				id.WriteByte('"')
				j += 2
				continue
			}
			return id.String(), j + 1, nil
		}
		id.WriteByte(s[j])
		j++
	}
}

// uescape reads an optional UESCAPE 'c' clause at s[i:] (after blanks and
// comments) and returns the escape character and the index after it.
func uescape(s string, i int) (byte, int, bool) {
	j := skipBlank(s, i)
	if len(s)-j < 7 || !strings.EqualFold(s[j:j+7], "uescape") || (j+7 < len(s) && isIdentByte(s[j+7])) {
		return 0, 0, false
	}
	j = skipBlank(s, j+7)
	if j+2 >= len(s) || s[j] != '\'' || s[j+2] != '\'' {
		return 0, 0, false
	}
	return s[j+1], j + 3, true
}

// skipBlank skips white space and comments.
func skipBlank(s string, i int) int {
	for i < len(s) {
		switch {
		case s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r' || s[i] == '\f':
			i++
		case strings.HasPrefix(s[i:], "--"):
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case strings.HasPrefix(s[i:], "/*"):
			depth := 0
			for i < len(s) {
				if strings.HasPrefix(s[i:], "/*") {
					depth++
					i += 2
				} else if strings.HasPrefix(s[i:], "*/") {
					depth--
					i += 2
					if depth == 0 {
						break
					}
				} else {
					i++
				}
			}
		default:
			return i
		}
	}
	return i
}

// unescapeUnicode decodes the escapes of a U&"..." identifier: esc+XXXX,
// esc+"+"+XXXXXX, and esc+esc. A malformed escape is refused (PostgreSQL
// refuses it too).
func unescapeUnicode(raw string, esc byte) (string, error) {
	var out strings.Builder
	for i := 0; i < len(raw); {
		if raw[i] != esc {
			out.WriteByte(raw[i])
			i++
			continue
		}
		switch {
		case i+1 < len(raw) && raw[i+1] == esc:
			out.WriteByte(esc)
			i += 2
		case i+7 < len(raw) && raw[i+1] == '+' && isHex(raw[i+2:i+8]):
			r, _ := strconv.ParseUint(raw[i+2:i+8], 16, 32)
			out.WriteRune(rune(r))
			i += 8
		case i+4 < len(raw) && isHex(raw[i+1:i+5]):
			r, _ := strconv.ParseUint(raw[i+1:i+5], 16, 32)
			out.WriteRune(rune(r))
			i += 5
		default:
			return "", fmt.Errorf("%w: malformed Unicode escape in U&\"%s\"", ErrStatement, raw)
		}
	}
	return out.String(), nil
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if !(isDigit(s[i]) || s[i] >= 'a' && s[i] <= 'f' || s[i] >= 'A' && s[i] <= 'F') {
			return false
		}
	}
	return s != ""
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
