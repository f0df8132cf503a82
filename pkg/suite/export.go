package suite

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/suitegen/suitegen/pkg/scenario"
)

// Export formats.
const (
	FormatJSONL    = "jsonl"
	FormatTauBench = "tau-bench"
)

// Task is one tau-bench task. Data holds, by collection and key, the
// documents to load over the benchmark's own data before the task runs
// (null: remove the document); the benchmark's Task model ignores the
// fields it does not have (id, annotator, data).
type Task struct {
	ID          string                                `json:"id"`
	Annotator   string                                `json:"annotator"`
	UserID      string                                `json:"user_id"`
	Instruction string                                `json:"instruction"`
	Actions     []Action                              `json:"actions"`
	Outputs     []string                              `json:"outputs"`
	Data        map[string]map[string]json.RawMessage `json:"data"`
	// Judged lists what the task asks that no code proved: its judged
	// sub-goals, for a grader to judge from the transcript.
	Judged []JudgedGoal `json:"judged,omitempty"`
	// Tempting, on a scenario that expects a refusal, a question or a
	// hand-over, is the wrong agent's calls the export scored: the reference
	// calls that do not end the conversation, then the tempting ones, with
	// their references resolved. The benchmark's reward gives them 0.
	Tempting []Action `json:"tempting,omitempty"`
}

// JudgedGoal is a judged sub-goal of a task, with what it means (from
// catalogue.json, when the suite has one).
type JudgedGoal struct {
	Name   string         `json:"name"`
	What   string         `json:"what,omitempty"`
	Params map[string]any `json:"params,omitempty"`
}

// Action is one step of a task's reference solution.
type Action struct {
	Name   string         `json:"name"`
	Kwargs map[string]any `json:"kwargs"`
}

// ErrNeedsWorld is returned by Export for a format that replays the suite in
// its world (tau-bench: ExportTauBench; tau2-bench: ExportTau2Bench).
var ErrNeedsWorld = errors.New("this format replays the suite in its world: it needs the contract")

// Export writes the suite saved under out (index.json order) to w: "jsonl" is
// one compact scenario per line.
func Export(out string, format string, w io.Writer) error {
	if format == FormatTauBench || format == FormatTau2Bench {
		return fmt.Errorf("suite: %s: %w", format, ErrNeedsWorld)
	}
	if format != FormatJSONL {
		return fmt.Errorf("suite: unknown format %q (want %s)", format, FormatJSONL)
	}
	raw, err := os.ReadFile(filepath.Join(out, "index.json"))
	if err != nil {
		return fmt.Errorf("suite: %w", err)
	}
	var idx Index
	if err := json.Unmarshal(raw, &idx); err != nil {
		return fmt.Errorf("suite: index.json: %w", err)
	}
	bw := bufio.NewWriter(w)
	for _, e := range idx.Scenarios {
		if !safeName.MatchString(e.Name) {
			return fmt.Errorf("suite: index.json names %q, which is not a scenario folder name", e.Name)
		}
		path := filepath.Join(out, "scenarios", e.Name, "scenario.json")
		body, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("suite: %w", err)
		}
		line, err := jsonlLine(body)
		if err != nil {
			return fmt.Errorf("suite: %s: %w", path, err)
		}
		bw.Write(line)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("suite: %w", err)
	}
	return nil
}

// jsonlLine is a scenario file as one compact line; the file must hold a
// JSON object that decodes as a Scenario.
func jsonlLine(body []byte) ([]byte, error) {
	if _, err := decode(body); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, body); err != nil {
		return nil, err
	}
	buf.WriteByte('\n')
	return buf.Bytes(), nil
}

// decode is the shared strict scenario decoder: unknown fields, trailing data
// and oversized files are errors.
func decode(body []byte) (*scenario.Scenario, error) {
	return scenario.Decode(body)
}

// judgedWhats reads what each judged sub-goal of a suite's catalogue means;
// a suite without a readable catalogue exports names alone.
func judgedWhats(out string) map[string]string {
	whats := map[string]string{}
	raw, err := os.ReadFile(filepath.Join(out, "catalogue.json"))
	if err != nil {
		return whats
	}
	var cat []SubGoalInfo
	if json.Unmarshal(raw, &cat) != nil {
		return whats
	}
	for _, g := range cat {
		if g.Judged {
			whats[g.Name] = g.What
		}
	}
	return whats
}

// judgedOf is a scenario's judged sub-goals as a task lists them.
func judgedOf(sc *scenario.Scenario, whats map[string]string) []JudgedGoal {
	var out []JudgedGoal
	for _, g := range sc.SubGoals {
		if g.Judged {
			out = append(out, JudgedGoal{Name: g.Name, What: whats[g.Name], Params: g.Params})
		}
	}
	return out
}
