package suite

import (
	"bufio"
	"bytes"
	"encoding/json"
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

// Task is one tau-bench-style task.
type Task struct {
	ID          string   `json:"id"`
	Annotator   string   `json:"annotator"`
	UserID      any      `json:"user_id"`
	Instruction string   `json:"instruction"`
	Actions     []Action `json:"actions"`
	Outputs     []string `json:"outputs"`
	// Judged lists what the task asks that no code proved: its judged
	// sub-goals, for a grader to judge from the transcript.
	Judged []JudgedGoal `json:"judged,omitempty"`
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

// Export writes the suite saved under out (index.json order) to w: "jsonl" is
// one compact scenario per line, "tau-bench" a JSON array of tasks.
func Export(out string, format string, w io.Writer) error {
	if format != FormatJSONL && format != FormatTauBench {
		return fmt.Errorf("suite: export: unknown format %q (want %s or %s)", format, FormatJSONL, FormatTauBench)
	}
	raw, err := os.ReadFile(filepath.Join(out, "index.json"))
	if err != nil {
		return fmt.Errorf("suite: export: %w", err)
	}
	var idx Index
	if err := json.Unmarshal(raw, &idx); err != nil {
		return fmt.Errorf("suite: export: index.json: %w", err)
	}
	whats := judgedWhats(out)
	bw := bufio.NewWriter(w)
	tasks := []Task{}
	for _, e := range idx.Scenarios {
		if !safeName.MatchString(e.Name) {
			return fmt.Errorf("suite: export: index.json names %q, which is not a scenario folder name", e.Name)
		}
		path := filepath.Join(out, "scenarios", e.Name, "scenario.json")
		body, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("suite: export: %w", err)
		}
		switch format {
		case FormatJSONL:
			line, err := jsonlLine(body)
			if err != nil {
				return fmt.Errorf("suite: export: %s: %w", path, err)
			}
			bw.Write(line)
		case FormatTauBench:
			t, err := taskOf(body, whats)
			if err != nil {
				return fmt.Errorf("suite: export: %s: %w", path, err)
			}
			tasks = append(tasks, t)
		}
	}
	if format == FormatTauBench {
		b, err := encode(tasks)
		if err != nil {
			return fmt.Errorf("suite: export: %w", err)
		}
		bw.Write(b)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("suite: export: %w", err)
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

// taskOf maps a scenario to a task: the caller is the user, the solution the
// actions, the outputs what the agent must say, the judged sub-goals what a
// grader must judge.
func taskOf(body []byte, whats map[string]string) (Task, error) {
	sc, err := decode(body)
	if err != nil {
		return Task{}, err
	}
	t := Task{ID: sc.Name, Annotator: "suitegen", UserID: sc.CallerID, Instruction: sc.Instruction,
		Actions: []Action{}, Outputs: []string{}}
	for _, c := range sc.Solution {
		kw := c.Args
		if kw == nil {
			kw = map[string]any{}
		}
		t.Actions = append(t.Actions, Action{Name: c.Tool, Kwargs: kw})
	}
	t.Outputs = append(t.Outputs, sc.Outputs...)
	for _, g := range sc.SubGoals {
		if g.Judged {
			t.Judged = append(t.Judged, JudgedGoal{Name: g.Name, What: whats[g.Name], Params: g.Params})
		}
	}
	return t, nil
}
