// Package seedfile writes a world the way a contract directory holds it:
// world/schema.sql and one world/seed/<table>.jsonl per table, for the
// converters that port a benchmark's published data.
package seedfile

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// Field is one column of a seed row: its name, then its value.
type Field [2]any

// Row is one seed line. Its columns keep the schema's order, so the seed
// reads like the schema.
type Row []Field

// MarshalJSON writes the row's non-null columns in order; a nullable column
// left out loads as null.
func (r Row) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	n := 0
	for _, f := range r {
		col, ok := f[0].(string)
		if !ok {
			return nil, fmt.Errorf("column name %v is not text", f[0])
		}
		v, err := json.Marshal(f[1])
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", col, err)
		}
		if string(v) == "null" {
			continue
		}
		if n > 0 {
			b.WriteByte(',')
		}
		n++
		k, _ := json.Marshal(col)
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// Write replaces out/schema.sql with schema and writes out/seed/T.jsonl for
// each of tables, one line per row of seed[T].
func Write(out, schema string, tables []string, seed map[string][]Row) error {
	dir := filepath.Join(out, "seed")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, "schema.sql"), []byte(schema), 0o644); err != nil {
		return err
	}
	for _, t := range tables {
		if err := writeTable(filepath.Join(dir, t+".jsonl"), seed[t]); err != nil {
			return err
		}
	}
	return nil
}

func writeTable(path string, rows []Row) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	for _, r := range rows {
		b, err := json.Marshal(r)
		if err != nil {
			f.Close()
			return fmt.Errorf("%s: %w", path, err)
		}
		w.Write(b)
		w.WriteByte('\n')
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	return f.Close()
}
