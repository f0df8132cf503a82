package plan

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
	"unicode/utf8"

	"go.starlark.net/syntax"
	"gopkg.in/yaml.v3"

	"github.com/suitegen/suitegen/pkg/contract"
)

// renaming maps every name of a contract's world to an opaque one: tools to
// tNN, tables to tbNN, and arguments and columns to nNN. Arguments and
// columns share one map: a Starlark string such as "order_id" may be read
// as an argument (args["order_id"]) or a column (row["order_id"]) and only a
// data flow could tell which, so a name both are spelt with stays one name.
// Columns a handler reaches by a built name ("price_" + cabin) keep their
// suffix behind an opaque prefix.
type renaming struct {
	tools, tables, names, prefixes map[string]string
}

// back maps an opaque name to the name it stands for.
func (r *renaming) back() map[string]string {
	out := map[string]string{}
	for _, m := range []map[string]string{r.tools, r.tables, r.names} {
		for k, v := range m {
			out[v] = k
		}
	}
	return out
}

// word renames a whole string that is one name of the world, if it is one.
func (r *renaming) word(s string) (string, bool) {
	if v, ok := r.tools[s]; ok {
		return v, true
	}
	if v, ok := r.tables[s]; ok {
		return v, true
	}
	if v, ok := r.names[s]; ok {
		return v, true
	}
	if v, ok := r.prefixes[s]; ok {
		return v, true
	}
	return s, false
}

// renameContract loads the contract in dir and returns a copy of its files
// with every tool, argument, table and column renamed, and the renaming.
func renameContract(t *testing.T, dir string) (fstest.MapFS, *renaming) {
	t.Helper()
	c, probs, err := contract.Load(dir)
	if err != nil || len(probs) > 0 {
		t.Fatalf("load %s: %v %v", dir, err, probs)
	}
	r := &renaming{tools: map[string]string{}, tables: map[string]string{}, names: map[string]string{}, prefixes: map[string]string{}}
	for i, tl := range c.Tools {
		r.tools[tl.Name] = fmt.Sprintf("t%02d", i+1)
	}
	var cols []string
	for i, tb := range c.Tables {
		r.tables[tb.Name] = fmt.Sprintf("tb%02d", i+1)
		for _, col := range tb.Columns {
			cols = append(cols, col.Name)
		}
	}
	// Prefixes handlers build column names from.
	for _, p := range builtPrefixes(t, c) {
		n := 0
		for _, col := range cols {
			if strings.HasPrefix(col, p) && len(col) > len(p) {
				n++
			}
		}
		if n > 0 {
			r.prefixes[p] = fmt.Sprintf("p%02d_", len(r.prefixes)+1)
		}
	}
	next := 0
	name := func(s string) {
		if _, ok := r.names[s]; ok {
			return
		}
		if v, ok := r.tables[s]; ok {
			// A Starlark string spelt as a table and as an argument or a
			// column is either: one name keeps it both.
			r.names[s] = v
			return
		}
		for p, np := range r.prefixes {
			if strings.HasPrefix(s, p) && len(s) > len(p) {
				r.names[s] = np + s[len(p):]
				return
			}
		}
		next++
		r.names[s] = fmt.Sprintf("n%02d", next)
	}
	for _, col := range cols {
		name(col)
	}
	for _, tl := range c.Tools {
		for _, a := range schemaNames(tl.Params) {
			name(a)
		}
	}

	out := fstest.MapFS{}
	for p, b := range c.Files {
		switch {
		case p == "contract.yaml":
			out[p] = &fstest.MapFile{Data: r.yamlFile(t, b)}
		case p == "world/schema.sql":
			out[p] = &fstest.MapFile{Data: []byte(r.sql(string(b)))}
		case strings.HasPrefix(p, contract.SeedDir+"/") && strings.HasSuffix(p, ".jsonl"):
			tb := strings.TrimSuffix(path.Base(p), ".jsonl")
			out[path.Join(contract.SeedDir, r.tables[tb]+".jsonl")] = &fstest.MapFile{Data: r.seed(t, b)}
		case strings.HasSuffix(p, ".star"):
			np := p
			if strings.HasPrefix(p, "handlers/") {
				if v, ok := r.tools[strings.TrimSuffix(path.Base(p), ".star")]; ok {
					np = "handlers/" + v + ".star"
				}
			}
			out[np] = &fstest.MapFile{Data: r.star(t, p, b)}
		default:
			out[p] = &fstest.MapFile{Data: b}
		}
	}
	return out, r
}

// schemaNames lists every property name of a JSON schema, nested ones too.
func schemaNames(s any) []string {
	var out []string
	switch v := s.(type) {
	case map[string]any:
		if props, ok := v["properties"].(map[string]any); ok {
			for k, sub := range props {
				out = append(out, k)
				out = append(out, schemaNames(sub)...)
			}
		}
		for k, sub := range v {
			if k != "properties" {
				out = append(out, schemaNames(sub)...)
			}
		}
	case []any:
		for _, sub := range v {
			out = append(out, schemaNames(sub)...)
		}
	}
	sort.Strings(out)
	return out
}

// builtPrefixes are the string literals a Starlark source adds something to
// ("price_" + cabin).
func builtPrefixes(t *testing.T, c *contract.Contract) []string {
	seen := map[string]bool{}
	for p, src := range c.Sources {
		f, err := starOptions.Parse(p, src, 0)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		syntax.Walk(f, func(n syntax.Node) bool {
			if b, ok := n.(*syntax.BinaryExpr); ok && b.Op == syntax.PLUS {
				if l, ok := b.X.(*syntax.Literal); ok && l.Token == syntax.STRING {
					if s := l.Value.(string); strings.HasSuffix(s, "_") && !strings.ContainsAny(s, " \t\n") {
						seen[s] = true
					}
				}
			}
			return true
		})
	}
	var out []string
	for s := range seen {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

var starOptions = &syntax.FileOptions{Set: true, While: true, TopLevelControl: true, GlobalReassign: true, Recursion: true}

// star rewrites the string literals of a Starlark source: a literal that is
// a name is renamed, one that reads as SQL has its identifiers renamed.
func (r *renaming) star(t *testing.T, p string, src []byte) []byte {
	t.Helper()
	f, err := starOptions.Parse(p, src, 0)
	if err != nil {
		t.Fatalf("%s: %v", p, err)
	}
	lines := [][2]int{{0, 0}} // line -> byte offset of its start (1-based lines)
	off := 0
	for _, ln := range bytes.SplitAfter(src, []byte("\n")) {
		lines = append(lines, [2]int{off, len(ln)})
		off += len(ln)
	}
	type edit struct {
		at, end int
		text    string
	}
	var edits []edit
	syntax.Walk(f, func(n syntax.Node) bool {
		l, ok := n.(*syntax.Literal)
		if !ok || l.Token != syntax.STRING {
			return true
		}
		s := l.Value.(string)
		ns, ok := r.word(s)
		if !ok && looksSQL(s) {
			ns = r.sql(s)
		}
		if ns == s {
			return true
		}
		start := lines[l.TokenPos.Line][0]
		for i := int32(1); i < l.TokenPos.Col; i++ {
			_, w := utf8.DecodeRune(src[start:])
			start += w
		}
		if !bytes.HasPrefix(src[start:], []byte(l.Raw)) {
			t.Fatalf("%s:%d: literal %q not where the parser says", p, l.TokenPos.Line, l.Raw)
		}
		edits = append(edits, edit{start, start + len(l.Raw), strconv.Quote(ns)})
		return true
	})
	sort.Slice(edits, func(i, j int) bool { return edits[i].at < edits[j].at })
	var b bytes.Buffer
	last := 0
	for _, e := range edits {
		b.Write(src[last:e.at])
		b.WriteString(e.text)
		last = e.end
	}
	b.Write(src[last:])
	return b.Bytes()
}

// looksSQL: a string holding an upper-case SQL keyword as a word.
func looksSQL(s string) bool {
	for _, w := range strings.FieldsFunc(s, func(r rune) bool { return !isIdent(r) }) {
		switch w {
		case "SELECT", "UPDATE", "INSERT", "DELETE", "FROM", "WHERE", "SET", "VALUES", "RETURNING", "JOIN", "ORDER", "AND", "ON":
			return true
		}
	}
	return false
}

func isIdent(r rune) bool {
	return r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
}

// sql renames the identifiers of SQL text that name tables and columns:
// never inside string literals or comments, never a type (after :: or a
// column's name in CREATE TABLE), never a function (a name before "(" that
// is no table), never a typed literal's type (date '2026-01-01').
func (r *renaming) sql(s string) string {
	var b strings.Builder
	prev := ""     // the previous token, lower case
	depth := 0     // parentheses inside a CREATE TABLE
	table := false // inside CREATE TABLE's column list
	typ := false   // after a column's name in CREATE TABLE: its type
	createSeen := 0
	next := func(i int) byte { // next non-space byte
		for ; i < len(s); i++ {
			if s[i] != ' ' && s[i] != '\t' && s[i] != '\n' && s[i] != '\r' {
				return s[i]
			}
		}
		return 0
	}
	for i := 0; i < len(s); {
		ch := s[i]
		switch {
		case ch == '\'':
			j := i + 1
			for j < len(s) {
				if s[j] == '\'' {
					if j+1 < len(s) && s[j+1] == '\'' {
						j += 2
						continue
					}
					break
				}
				j++
			}
			j = min(j+1, len(s))
			b.WriteString(s[i:j])
			prev, i = "'", j
		case ch == '-' && i+1 < len(s) && s[i+1] == '-':
			j := strings.IndexByte(s[i:], '\n')
			if j < 0 {
				j = len(s) - i
			}
			b.WriteString(s[i : i+j])
			i += j
		case ch == '/' && i+1 < len(s) && s[i+1] == '*':
			j := strings.Index(s[i+2:], "*/")
			end := len(s)
			if j >= 0 {
				end = i + 2 + j + 2
			}
			b.WriteString(s[i:end])
			i = end
		case ch == '"':
			j := strings.IndexByte(s[i+1:], '"')
			if j < 0 {
				b.WriteString(s[i:])
				i = len(s)
				continue
			}
			id := s[i+1 : i+1+j]
			if v, ok := r.sqlName(id, false); ok {
				id = v
			}
			b.WriteString(`"` + id + `"`)
			prev, i = "ident", i+j+2
		case isIdent(rune(ch)) && !(ch >= '0' && ch <= '9'):
			j := i
			for j < len(s) && isIdent(rune(s[j])) {
				j++
			}
			w := s[i:j]
			lw := strings.ToLower(w)
			out := w
			switch {
			case prev == "::" || typ:
			case prev == "$":
			case table && depth == 1 && (prev == "(" || prev == ","):
				// A column's name, or a table constraint's keyword.
				if v, ok := r.names[lw]; ok {
					out = v
					typ = true
				}
			case next(j) == '\'':
			case next(j) == '(' && prev != ".":
				if v, ok := r.tables[lw]; ok {
					out = v
				}
			default:
				if v, ok := r.sqlName(lw, prev == "."); ok {
					out = v
				}
			}
			if typ && out == w && prev != "(" && prev != "," {
				switch strings.ToUpper(w) {
				case "NOT", "NULL", "DEFAULT", "PRIMARY", "REFERENCES", "CHECK", "UNIQUE", "GENERATED", "CONSTRAINT", "COLLATE":
					typ = false
					if v, ok := r.sqlName(lw, false); ok {
						out = v
					}
				}
			}
			if strings.EqualFold(w, "CREATE") {
				createSeen = 1
			} else if createSeen == 1 && strings.EqualFold(w, "TABLE") {
				createSeen = 2
			}
			b.WriteString(out)
			prev, i = lw, j
		case ch == ':' && i+1 < len(s) && s[i+1] == ':':
			b.WriteString("::")
			prev, i = "::", i+2
		default:
			switch ch {
			case '(':
				if createSeen == 2 && !table {
					table, depth = true, 0
				}
				if table {
					depth++
				}
			case ')':
				if table {
					depth--
					if depth == 0 {
						table, createSeen = false, 0
					}
				}
			case ',':
				if table && depth == 1 {
					typ = false
				}
			}
			b.WriteByte(ch)
			if ch != ' ' && ch != '\t' && ch != '\n' && ch != '\r' {
				prev = string(ch)
			}
			i++
		}
	}
	return b.String()
}

// sqlName renames a table or column; qualified (after a dot) it is a column.
func (r *renaming) sqlName(w string, qualified bool) (string, bool) {
	if !qualified {
		if v, ok := r.tables[w]; ok {
			return v, true
		}
	}
	v, ok := r.names[w]
	return v, ok
}

// seed renames the keys of every row of a seed file.
func (r *renaming) seed(t *testing.T, b []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	for _, ln := range bytes.Split(b, []byte("\n")) {
		if len(bytes.TrimSpace(ln)) == 0 {
			continue
		}
		d := json.NewDecoder(bytes.NewReader(ln))
		d.UseNumber()
		var row map[string]any
		if err := d.Decode(&row); err != nil {
			t.Fatalf("seed row %s: %v", ln, err)
		}
		nr := map[string]any{}
		for k, v := range row {
			nk, _ := r.word(k)
			nr[nk] = v
		}
		j, err := json.Marshal(nr)
		if err != nil {
			t.Fatal(err)
		}
		out.Write(j)
		out.WriteByte('\n')
	}
	return out.Bytes()
}

// yamlFile renames the names contract.yaml gives; text meant for people
// (descriptions, notes, rule and use case text, ids) stays as written.
func (r *renaming) yamlFile(t *testing.T, b []byte) []byte {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	root := doc.Content[0]
	str := func(n *yaml.Node, m map[string]string) {
		if n != nil && n.Kind == yaml.ScalarNode {
			if v, ok := m[n.Value]; ok {
				n.Value = v
			}
		}
	}
	list := func(n *yaml.Node, m map[string]string) {
		if n == nil {
			return
		}
		if n.Kind == yaml.ScalarNode {
			str(n, m)
		}
		for _, e := range n.Content {
			str(e, m)
		}
	}
	each := func(n *yaml.Node, f func(k string, v *yaml.Node)) {
		if n == nil || n.Kind != yaml.MappingNode {
			return
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			f(n.Content[i].Value, n.Content[i+1])
		}
	}
	var keys func(n *yaml.Node) // renames every mapping key, recursively
	keys = func(n *yaml.Node) {
		if n == nil {
			return
		}
		if n.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(n.Content); i += 2 {
				str(n.Content[i], r.names)
			}
		}
		for _, e := range n.Content {
			keys(e)
		}
	}
	each(root, func(k string, v *yaml.Node) {
		switch k {
		case "caller":
			each(v, func(k string, v *yaml.Node) {
				switch k {
				case "table":
					str(v, r.tables)
				case "key":
					str(v, r.names)
				case "from":
					list(v, r.tools)
				}
			})
		case "use_cases":
			for _, u := range v.Content {
				each(u, func(k string, v *yaml.Node) {
					switch k {
					case "tools":
						list(v, r.tools)
					case "purpose":
						str(v, r.tables)
					case "missed_call", "call_later":
						str(v, r.tools)
					}
				})
			}
		case "tools":
			for _, tl := range v.Content {
				each(tl, func(k string, v *yaml.Node) {
					switch k {
					case "name":
						str(v, r.tools)
					case "handler":
						if v.Kind == yaml.ScalarNode && strings.HasPrefix(v.Value, "handlers/") {
							if nv, ok := r.tools[strings.TrimSuffix(path.Base(v.Value), ".star")]; ok {
								v.Value = "handlers/" + nv + ".star"
							}
						}
					case "params":
						r.yamlSchema(v)
					case "log_only":
						list(v, r.names)
					case "requires":
						for _, req := range v.Content {
							if req.Kind != yaml.MappingNode {
								list(req, r.tools)
								continue
							}
							each(req, func(k string, v *yaml.Node) {
								switch k {
								case "tool":
									list(v, r.tools)
								case "same":
									list(v, r.names)
								}
							})
						}
					}
				})
			}
		case "sequences":
			for _, sq := range v.Content {
				each(sq, func(k string, v *yaml.Node) {
					switch k {
					case "steps":
						for _, st := range v.Content {
							each(st, func(k string, v *yaml.Node) {
								switch k {
								case "tool":
									str(v, r.tools)
								case "args":
									keys(v)
								}
							})
						}
					case "expect":
						for _, ex := range v.Content {
							each(ex, func(k string, v *yaml.Node) {
								switch k {
								case "sql":
									v.Value = r.sql(v.Value)
								case "rows":
									keys(v)
								}
							})
						}
					}
				})
			}
		}
	})
	out, err := yaml.Marshal(&doc)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// yamlSchema renames the property names, required lists and x-refs of a
// JSON schema.
func (r *renaming) yamlSchema(n *yaml.Node) {
	if n == nil {
		return
	}
	if n.Kind == yaml.SequenceNode {
		for _, e := range n.Content {
			r.yamlSchema(e)
		}
		return
	}
	if n.Kind != yaml.MappingNode {
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i].Value, n.Content[i+1]
		switch k {
		case "properties":
			for j := 0; j+1 < len(v.Content); j += 2 {
				if nv, ok := r.names[v.Content[j].Value]; ok {
					v.Content[j].Value = nv
				}
				r.yamlSchema(v.Content[j+1])
			}
		case "required":
			for _, e := range v.Content {
				if nv, ok := r.names[e.Value]; ok {
					e.Value = nv
				}
			}
		case "x-ref":
			if tb, col, ok := strings.Cut(v.Value, "."); ok && v.Kind == yaml.ScalarNode {
				if nt, ok := r.tables[tb]; ok {
					tb = nt
				}
				if nc, ok := r.names[col]; ok {
					col = nc
				}
				v.Value = tb + "." + col
			}
		default:
			r.yamlSchema(v)
		}
	}
}
