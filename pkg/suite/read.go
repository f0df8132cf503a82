package suite

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"

	"github.com/suitegen/suitegen/pkg/ledger"
	"github.com/suitegen/suitegen/pkg/scenario"
)

// ErrNotSuite is a directory that holds no written suite (no readable
// index.json, or no scenarios folder).
var ErrNotSuite = errors.New("not a suite")

// NotSuiteError says why a directory is not a suite.
type NotSuiteError struct {
	Dir, Why string
}

func (e *NotSuiteError) Error() string {
	return fmt.Sprintf("%s is not a suite: %s", e.Dir, e.Why)
}

// Is makes errors.Is(err, ErrNotSuite) hold.
func (e *NotSuiteError) Is(target error) bool { return target == ErrNotSuite }

// CorruptError is a file of a suite that does not read: the file, the field
// at fault when one is known, and why.
type CorruptError struct {
	File  string
	Field string
	Err   error
}

func (e *CorruptError) Error() string {
	if e.Field != "" {
		return fmt.Sprintf("%s: field %s: %v", e.File, e.Field, e.Err)
	}
	return fmt.Sprintf("%s: %v", e.File, e.Err)
}

func (e *CorruptError) Unwrap() error { return e.Err }

// Written is a suite read back from disk: its index and every scenario in
// index order, with each file's bytes as written.
type Written struct {
	Dir       string
	Index     Index
	Scenarios []scenario.Scenario
	// Raw holds each scenario file's bytes, by name.
	Raw map[string][]byte
}

// File is the path of a scenario's file under dir.
func File(dir, name string) string {
	return filepath.Join(dir, "scenarios", name, "scenario.json")
}

// Read reads the suite written under dir. A directory that is no suite is a
// *NotSuiteError; a file that does not read is a *CorruptError naming the
// file and, when it can, the field.
func Read(dir string) (*Written, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, &NotSuiteError{Dir: dir, Why: err.Error()}
	}
	if !st.IsDir() {
		return nil, &NotSuiteError{Dir: dir, Why: "not a directory"}
	}
	idxPath := filepath.Join(dir, "index.json")
	raw, err := os.ReadFile(idxPath)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, &NotSuiteError{Dir: dir, Why: "it has no index.json"}
	}
	if err != nil {
		return nil, &CorruptError{File: idxPath, Err: err}
	}
	var idx Index
	d := json.NewDecoder(bytes.NewReader(raw))
	d.DisallowUnknownFields()
	if err := d.Decode(&idx); err != nil {
		return nil, &CorruptError{File: idxPath, Field: fieldOf(err, raw, reflect.TypeFor[Index]()), Err: err}
	}
	if idx.Agent == "" {
		return nil, &CorruptError{File: idxPath, Field: "agent", Err: errors.New("empty")}
	}
	if st, err := os.Stat(filepath.Join(dir, "scenarios")); err != nil || !st.IsDir() {
		return nil, &NotSuiteError{Dir: dir, Why: "it has no scenarios folder"}
	}
	w := &Written{Dir: dir, Index: idx, Raw: map[string][]byte{}}
	for i, e := range idx.Scenarios {
		if !safeName.MatchString(e.Name) {
			return nil, &CorruptError{File: idxPath, Field: fmt.Sprintf("scenarios[%d].name", i), Err: fmt.Errorf("%q is not a scenario folder name", e.Name)}
		}
		if _, dup := w.Raw[e.Name]; dup {
			return nil, &CorruptError{File: idxPath, Field: fmt.Sprintf("scenarios[%d].name", i), Err: fmt.Errorf("%q is listed twice", e.Name)}
		}
		path := File(dir, e.Name)
		body, err := os.ReadFile(path)
		if err != nil {
			return nil, &CorruptError{File: path, Err: err}
		}
		sc, err := scenario.Decode(body)
		if err != nil {
			return nil, &CorruptError{File: path, Field: fieldOf(err, body, reflect.TypeFor[scenario.Scenario]()), Err: err}
		}
		for field, v := range map[string]string{"name": sc.Name, "use_case": sc.UseCase, "branch": sc.Branch} {
			if strings.TrimSpace(v) == "" {
				return nil, &CorruptError{File: path, Field: field, Err: errors.New("empty")}
			}
		}
		if sc.Name != e.Name {
			return nil, &CorruptError{File: path, Field: "name", Err: fmt.Errorf("%q, but index.json lists the file as %q", sc.Name, e.Name)}
		}
		w.Raw[e.Name] = body
		w.Scenarios = append(w.Scenarios, *sc)
	}
	return w, nil
}

// Scenarios reads the scenarios of a suite written under out, in index
// order: what an export replays. Unlike Read it asks no more of index.json
// than the scenarios it names.
func Scenarios(out string) ([]*scenario.Scenario, error) {
	raw, err := os.ReadFile(filepath.Join(out, "index.json"))
	if err != nil {
		return nil, fmt.Errorf("suite: %w", err)
	}
	var idx Index
	if err := json.Unmarshal(raw, &idx); err != nil {
		return nil, fmt.Errorf("suite: index.json: %w", err)
	}
	var scs []*scenario.Scenario
	for _, e := range idx.Scenarios {
		if !safeName.MatchString(e.Name) {
			return nil, fmt.Errorf("suite: index.json names %q, which is not a scenario folder name", e.Name)
		}
		path := File(out, e.Name)
		body, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("suite: %w", err)
		}
		sc, err := decode(body)
		if err != nil {
			return nil, fmt.Errorf("suite: %s: %w", path, err)
		}
		scs = append(scs, sc)
	}
	return scs, nil
}

// fieldOf names the field a JSON decoding error is about: the path of a
// value of the wrong type, or the first top-level key the type does not
// have; "" when neither is known (a syntax error).
func fieldOf(err error, body []byte, t reflect.Type) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return te.Field
	}
	var top map[string]json.RawMessage
	if json.Unmarshal(body, &top) != nil {
		return ""
	}
	known := map[string]bool{}
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		known[name] = true
	}
	var unknown []string
	for k := range top {
		if !known[k] {
			unknown = append(unknown, k)
		}
	}
	sort.Strings(unknown)
	if len(unknown) > 0 {
		return unknown[0]
	}
	return ""
}

// WriteScenario writes one scenario's file under dir as Write does (a file
// already holding the same bytes is left alone).
func WriteScenario(dir string, sc *scenario.Scenario) error {
	if !safeName.MatchString(sc.Name) {
		return fmt.Errorf("suite: %q is not a scenario folder name", sc.Name)
	}
	if err := writeScenario(dir, sc); err != nil {
		return fmt.Errorf("suite: %w", err)
	}
	return nil
}

// writeScenario writes the file of sc, whose name is a folder name.
func writeScenario(dir string, sc *scenario.Scenario) error {
	body, err := Encode(sc)
	if err != nil {
		return fmt.Errorf("%s: %w", sc.Name, err)
	}
	if err := os.MkdirAll(filepath.Dir(File(dir, sc.Name)), 0o755); err != nil {
		return err
	}
	return writeFile(File(dir, sc.Name), body)
}

// RemoveScenario removes one scenario's folder under dir.
func RemoveScenario(dir, name string) error {
	if !safeName.MatchString(name) {
		return fmt.Errorf("suite: %q is not a scenario folder name", name)
	}
	return os.RemoveAll(filepath.Join(dir, "scenarios", name))
}

// WriteIndex replaces dir's index.json.
func WriteIndex(dir string, idx Index) error {
	idx.Count = len(idx.Scenarios)
	return WriteJSON(filepath.Join(dir, "index.json"), idx)
}

// AddRunSubGoals adds to dir's catalogue.json the run sub-goals it does not
// name yet, and leaves the file alone when it has them all.
func AddRunSubGoals(dir string, gs []ledger.SubGoal) error {
	if len(gs) == 0 {
		return nil
	}
	path := filepath.Join(dir, "catalogue.json")
	var cat []SubGoalInfo
	if b, err := os.ReadFile(path); err == nil {
		if err := json.Unmarshal(b, &cat); err != nil {
			return &CorruptError{File: path, Err: err}
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("suite: %w", err)
	}
	seen := map[string]bool{}
	for _, g := range cat {
		seen[g.Name] = true
	}
	added := false
	for _, g := range gs {
		if seen[g.Name] {
			continue
		}
		seen[g.Name], added = true, true
		params := g.Params
		if params == nil {
			params = map[string]string{}
		}
		cat = append(cat, SubGoalInfo{Name: g.Name, What: g.What, Judged: g.Judged, Params: params, Origin: "run", Source: g.Source})
	}
	if !added {
		return nil
	}
	sort.SliceStable(cat, func(i, j int) bool { return cat[i].Name < cat[j].Name })
	return WriteJSON(path, cat)
}
