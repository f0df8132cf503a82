package contract

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"
)

// Seed files live here, one <table>.jsonl per table.
const SeedDir = "world/seed"

// Load reads a contract directory. It returns the contract and every problem
// found (not just the first); a contract with any problem must not be used.
// The error is only for the directory itself (missing, not a directory);
// everything wrong inside it is a Problem.
func Load(dir string) (*Contract, Problems, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("contract: %w", err)
	}
	if !st.IsDir() {
		return nil, nil, fmt.Errorf("contract: %s is not a directory", dir)
	}
	c, ps := load(os.DirFS(dir))
	c.Dir = dir
	return c, ps, nil
}

// LoadValid is Load for callers that can use only a sound contract: the
// directory's error, or every problem found (Problems is an error), makes it
// an error.
func LoadValid(dir string) (*Contract, error) {
	c, probs, err := Load(dir)
	if err != nil {
		return nil, err
	}
	if len(probs) > 0 {
		return nil, probs
	}
	return c, nil
}

// LoadFS reads a contract from the root of fsys: a directory, an embedded
// tree, or files kept elsewhere (the ledger keeps them by hash). It is Load
// without a directory on disk; the contract's Dir is empty. The error is only
// for a root that cannot be read.
func LoadFS(fsys fs.FS) (*Contract, Problems, error) {
	if _, err := fs.ReadDir(fsys, "."); err != nil {
		return nil, nil, fmt.Errorf("contract: %w", err)
	}
	c, ps := load(fsys)
	return c, ps, nil
}

func load(fsys fs.FS) (*Contract, Problems) {
	var ps Problems
	r := report{&ps}
	l := &loader{fsys: fsys, r: r, files: map[string][]byte{}, c: &Contract{Sources: map[string]string{}}}

	var pos *positions
	if data, ok := l.read(ContractFile); ok {
		pos = parseContractYAML(data, l.c, r)
	}
	l.schemaOK = false
	if data, ok := l.read(SchemaFile); ok {
		l.c.SchemaSQL = string(data)
		tables, sp := ParseSchemaSQL(l.c.SchemaSQL)
		l.c.Tables = tables
		ps = append(ps, sp...)
		l.schemaOK = tables != nil
	}
	l.loadSeeds()
	l.loadStarlark(pos)
	if pos != nil {
		l.check(pos)
	}
	if len(ps) == 0 && l.c.Caller == nil {
		l.c.inferCaller()
	}

	world := map[string][]byte{}
	for p, b := range l.files {
		if p == SchemaFile || strings.HasPrefix(p, SeedDir+"/") {
			world[p] = b
		}
	}
	l.c.Files = l.files
	l.c.SHA256 = HashFiles(l.files)
	l.c.WorldSHA256 = HashFiles(world)
	ps.Sort()
	if len(ps) == 0 {
		ps = nil
	}
	return l.c, ps
}

type loader struct {
	fsys     fs.FS
	r        report
	c        *Contract
	files    map[string][]byte // every file the contract is made of, for SHA256
	schemaOK bool              // schema.sql was read and tokenised: tables can be checked against it
	parsed   map[string]*starFile
}

// read reads a file the contract is made of; a missing one is a missing-file problem.
func (l *loader) read(rel string) ([]byte, bool) {
	data, err := fs.ReadFile(l.fsys, rel)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			l.r.add(rel, 0, CodeMissingFile, "%s is missing", rel)
		} else {
			l.r.add(rel, 0, CodeMissingFile, "cannot read %s: %v", rel, err)
		}
		return nil, false
	}
	l.files[rel] = data
	return data, true
}

// list returns the regular files of a directory (relative paths, sorted); a
// missing directory is empty.
func (l *loader) list(rel string) []string {
	entries, err := fs.ReadDir(l.fsys, rel)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			l.r.add(rel, 0, CodeMissingFile, "cannot read directory %s: %v", rel, err)
		}
		return nil
	}
	var out []string
	for _, e := range entries {
		if e.Type().IsRegular() || e.Type()&fs.ModeSymlink != 0 {
			out = append(out, path.Join(rel, e.Name()))
		}
	}
	sort.Strings(out)
	return out
}

func (l *loader) loadSeeds() {
	byTable := map[string]SeedTable{}
	for _, rel := range l.list(SeedDir) {
		data, ok := l.read(rel)
		if !ok {
			continue
		}
		base := path.Base(rel)
		if !strings.HasSuffix(base, ".jsonl") {
			l.r.add(rel, 0, CodeSeedUnknownTable, "seed files are named <table>.jsonl; %s is not", base)
			continue
		}
		table := strings.TrimSuffix(base, ".jsonl")
		var t *Table
		if l.schemaOK {
			if t = l.c.Table(table); t == nil {
				l.r.add(rel, 0, CodeSeedUnknownTable, "schema.sql has no table %q", table)
				continue
			}
		}
		st := SeedTable{Table: table, File: rel, Rows: []map[string]any{}}
		for i, line := range strings.Split(string(data), "\n") {
			line = strings.TrimSpace(line)
			if line == "" {
				continue
			}
			row, err := decodeRow(line)
			if err != nil {
				l.r.add(rel, i+1, CodeSeedBadJSON, "%v", err)
				continue
			}
			if t != nil {
				l.checkRow(rel, i+1, t, row)
			}
			st.Rows = append(st.Rows, row)
			st.Lines = append(st.Lines, i+1)
		}
		byTable[table] = st
	}
	// Seeds load in schema order; without a schema, in file order.
	for _, t := range l.c.Tables {
		if st, ok := byTable[t.Name]; ok {
			l.c.Seeds = append(l.c.Seeds, st)
			delete(byTable, t.Name)
		}
	}
	rest := make([]string, 0, len(byTable))
	for name := range byTable {
		rest = append(rest, name)
	}
	sort.Strings(rest)
	for _, name := range rest {
		l.c.Seeds = append(l.c.Seeds, byTable[name])
	}
}

// decodeRow reads one JSON object; integral numbers become int64, others float64.
func decodeRow(line string) (map[string]any, error) {
	dec := json.NewDecoder(strings.NewReader(line))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("more than one JSON value on the line (one row per line)")
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("a row must be a JSON object of column to value, not %s", jsonKind(v))
	}
	return convertNumbers(m).(map[string]any), nil
}

func jsonKind(v any) string {
	switch v.(type) {
	case []any:
		return "an array"
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", v)
}

func convertNumbers(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = convertNumbers(e)
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = convertNumbers(e)
		}
		return x
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	}
	return v
}

// checkRow reports what is visibly wrong with a seed row without a database.
func (l *loader) checkRow(file string, line int, t *Table, row map[string]any) {
	keys := make([]string, 0, len(row))
	for k := range row {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		col := t.Column(k)
		if col == nil {
			l.r.add(file, line, CodeSeedUnknownColumn, "table %s has no column %q", t.Name, k)
			continue
		}
		if row[k] == nil && col.NotNull {
			l.r.add(file, line, CodeSeedNotNull, "column %s.%s is NOT NULL but the row gives null", t.Name, k)
		}
	}
	for _, col := range t.Columns {
		if _, ok := row[col.Name]; !ok && col.NotNull && col.Default == "" {
			l.r.add(file, line, CodeSeedNotNull, "column %s.%s is NOT NULL and has no default, but the row leaves it out", t.Name, col.Name)
		}
	}
}
