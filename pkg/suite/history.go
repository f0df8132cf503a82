package suite

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// HistoryFile is where a suite keeps the versions of its scenarios that a
// revision replaced, one JSON object a line, oldest first.
const HistoryFile = "history.jsonl"

// Version is one replaced version of a scenario: its name, what the
// revision was asked, the run that wrote the replacement, and the scenario
// file as it was.
type Version struct {
	Name string          `json:"name"`
	Ask  string          `json:"ask"`
	Run  string          `json:"run"`
	Old  json.RawMessage `json:"old"`
}

// AppendHistory adds vs after the versions dir's history holds, replacing
// the file whole (as every file of a suite is written) so that a reader
// never sees half a line.
func AppendHistory(dir string, vs []Version) error {
	if len(vs) == 0 {
		return nil
	}
	path := filepath.Join(dir, HistoryFile)
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("suite: history: %w", err)
	}
	buf := bytes.NewBuffer(old)
	if n := len(old); n > 0 && old[n-1] != '\n' {
		buf.WriteByte('\n')
	}
	for _, v := range vs {
		var old bytes.Buffer
		if err := json.Compact(&old, v.Old); err != nil {
			return fmt.Errorf("suite: history of %s: %w", v.Name, err)
		}
		v.Old = old.Bytes()
		enc := json.NewEncoder(buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			return fmt.Errorf("suite: history of %s: %w", v.Name, err)
		}
	}
	if err := writeFile(path, buf.Bytes()); err != nil {
		return fmt.Errorf("suite: history: %w", err)
	}
	return nil
}

// ReadHistory reads dir's history, oldest first; a suite never revised has
// none. A line that does not read is a *CorruptError naming the file and
// the line.
func ReadHistory(dir string) ([]Version, error) {
	path := filepath.Join(dir, HistoryFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, &CorruptError{File: path, Err: err}
	}
	var out []Version
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, len(b)+1)
	for line := 1; sc.Scan(); line++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var v Version
		d := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		d.DisallowUnknownFields()
		if err := d.Decode(&v); err != nil {
			return nil, &CorruptError{File: fmt.Sprintf("%s:%d", path, line), Err: err}
		}
		if v.Name == "" || !json.Valid(v.Old) {
			return nil, &CorruptError{File: fmt.Sprintf("%s:%d", path, line), Field: "name or old", Err: errors.New("missing")}
		}
		out = append(out, v)
	}
	if err := sc.Err(); err != nil {
		return nil, &CorruptError{File: path, Err: err}
	}
	return out, nil
}
