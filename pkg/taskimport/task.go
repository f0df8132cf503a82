// Package taskimport reads the published task files of τ-bench (Python
// lists of Task(...) calls, parsed, never executed) and τ²-bench (JSON),
// and turns each task into a scenario of a ported contract, or names why it
// cannot be one. Proving the scenarios and writing the suite are the
// caller's (pkg/cli's import command).
package taskimport

import (
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Formats a task file may have.
const (
	FormatTauBench  = "tau-bench"
	FormatTau2Bench = "tau2-bench"
)

// Task is one benchmark task, whichever format it came from.
type Task struct {
	// ID is the task's id (τ²-bench) or its 0-based index in the file
	// (τ-bench, whose tasks have none).
	ID          string
	UserID      string
	Instruction string
	Actions     []Action
	Outputs     []string
	// Line is where the task starts in a τ-bench file (0 for JSON).
	Line int
	// UserActions are actions the benchmark has the user, not the agent,
	// perform (τ²-bench's requestor "user"): a scenario has no place for them.
	UserActions []Action
	// InitialState: the task starts from changed data (τ²-bench).
	InitialState bool
}

// Action is one reference call.
type Action struct {
	Name   string
	Kwargs map[string]any
}

// ParseTauBench reads a τ-bench task module: every top-level list of
// Task(...) calls, in order.
func ParseTauBench(src []byte) ([]Task, error) {
	as, err := ParsePython(src)
	if err != nil {
		return nil, err
	}
	var out []Task
	for _, a := range as {
		list, ok := a.Value.([]any)
		if !ok {
			continue
		}
		for _, v := range list {
			c, ok := v.(*Call)
			if !ok || c.Func != "Task" {
				return nil, &SyntaxError{a.Line, a.Col, fmt.Sprintf("%s holds something other than Task(...) calls", a.Name)}
			}
			t, err := taskOf(c)
			if err != nil {
				return nil, err
			}
			t.ID = strconv.Itoa(len(out))
			out = append(out, t)
		}
	}
	if len(out) == 0 {
		return nil, &SyntaxError{1, 1, "no list of Task(...) calls"}
	}
	return out, nil
}

func taskOf(c *Call) (Task, error) {
	t := Task{Line: c.Line}
	bad := func(k, want string) error {
		return &SyntaxError{c.Line, c.Col, fmt.Sprintf("Task %s: want %s", k, want)}
	}
	for _, k := range c.Order {
		v := c.Kwargs[k]
		switch k {
		case "annotator":
		case "user_id":
			s, ok := v.(string)
			if !ok {
				return t, bad(k, "a string")
			}
			t.UserID = s
		case "instruction":
			s, ok := v.(string)
			if !ok {
				return t, bad(k, "a string")
			}
			t.Instruction = s
		case "outputs":
			l, ok := v.([]any)
			if !ok {
				return t, bad(k, "a list of strings")
			}
			for _, o := range l {
				s, ok := o.(string)
				if !ok {
					return t, bad(k, "a list of strings")
				}
				t.Outputs = append(t.Outputs, s)
			}
		case "actions":
			l, ok := v.([]any)
			if !ok {
				return t, bad(k, "a list of Action(...)")
			}
			for _, a := range l {
				ac, ok := a.(*Call)
				if !ok || ac.Func != "Action" {
					return t, bad(k, "a list of Action(...)")
				}
				act, err := actionOf(ac)
				if err != nil {
					return t, err
				}
				t.Actions = append(t.Actions, act)
			}
		default:
			return t, &SyntaxError{c.Line, c.Col, fmt.Sprintf("Task has no field %s", k)}
		}
	}
	if t.UserID == "" || t.Instruction == "" {
		return t, &SyntaxError{c.Line, c.Col, "Task needs user_id and instruction"}
	}
	return t, nil
}

func actionOf(c *Call) (Action, error) {
	a := Action{Kwargs: map[string]any{}}
	for _, k := range c.Order {
		switch v := c.Kwargs[k]; k {
		case "name":
			s, ok := v.(string)
			if !ok || s == "" {
				return a, &SyntaxError{c.Line, c.Col, "Action name: want a string"}
			}
			a.Name = s
		case "kwargs":
			m, ok := v.(map[string]any)
			if !ok {
				return a, &SyntaxError{c.Line, c.Col, "Action kwargs: want a dict"}
			}
			if err := noCalls(m); err != nil {
				return a, &SyntaxError{c.Line, c.Col, "Action kwargs: " + err.Error()}
			}
			a.Kwargs = m
		default:
			return a, &SyntaxError{c.Line, c.Col, fmt.Sprintf("Action has no field %s", k)}
		}
	}
	if a.Name == "" {
		return a, &SyntaxError{c.Line, c.Col, "Action needs a name"}
	}
	return a, nil
}

// noCalls refuses a call nested in a value (an argument must be data).
func noCalls(v any) error {
	switch x := v.(type) {
	case *Call:
		return fmt.Errorf("%s(...) is not data", x.Func)
	case []any:
		for _, e := range x {
			if err := noCalls(e); err != nil {
				return err
			}
		}
	case map[string]any:
		for _, e := range x {
			if err := noCalls(e); err != nil {
				return err
			}
		}
	}
	return nil
}

// tau2Task is the part of τ²-bench's Task the import reads; the rest
// (persona, nl_assertions, reward_basis...) is allowed and ignored.
type tau2Task struct {
	ID           string `json:"id"`
	UserScenario struct {
		Instructions json.RawMessage `json:"instructions"`
	} `json:"user_scenario"`
	InitialState       json.RawMessage `json:"initial_state"`
	EvaluationCriteria *struct {
		Actions []struct {
			Name      string         `json:"name"`
			Arguments map[string]any `json:"arguments"`
			Requestor string         `json:"requestor"`
		} `json:"actions"`
		CommunicateInfo []string `json:"communicate_info"`
	} `json:"evaluation_criteria"`
}

type tau2Instructions struct {
	Domain           string  `json:"domain"`
	ReasonForCall    string  `json:"reason_for_call"`
	KnownInfo        *string `json:"known_info"`
	UnknownInfo      *string `json:"unknown_info"`
	TaskInstructions string  `json:"task_instructions"`
}

// userIDText finds the user id a τ²-bench task hands its user.
var userIDText = regexp.MustCompile(`(?i)user id is:?\s*['"]?([A-Za-z0-9_]+)`)

// ParseTau2Bench reads τ²-bench's tasks.json (a JSON list of tasks, or an
// object with a "tasks" list).
func ParseTau2Bench(r io.Reader) ([]Task, error) {
	raw, err := io.ReadAll(io.LimitReader(r, MaxSource+1))
	if err != nil {
		return nil, err
	}
	if len(raw) > MaxSource {
		return nil, fmt.Errorf("tau2-bench tasks: over %d bytes", MaxSource)
	}
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil {
		var doc struct {
			Tasks []json.RawMessage `json:"tasks"`
		}
		if err2 := json.Unmarshal(raw, &doc); err2 != nil || doc.Tasks == nil {
			return nil, fmt.Errorf("tau2-bench tasks: %w", err)
		}
		list = doc.Tasks
	}
	out := make([]Task, 0, len(list))
	for i, b := range list {
		var t tau2Task
		if err := json.Unmarshal(b, &t); err != nil {
			return nil, fmt.Errorf("tau2-bench task %d: %w", i, err)
		}
		task := Task{ID: t.ID}
		if task.ID == "" {
			task.ID = strconv.Itoa(i)
		}
		var ins tau2Instructions
		if len(t.UserScenario.Instructions) > 0 && json.Unmarshal(t.UserScenario.Instructions, &ins) != nil {
			// Older tasks give the instructions as one string.
			var s string
			if err := json.Unmarshal(t.UserScenario.Instructions, &s); err != nil {
				return nil, fmt.Errorf("tau2-bench task %s: user_scenario.instructions: %w", task.ID, err)
			}
			ins.ReasonForCall = s
		}
		var parts []string
		for _, s := range []string{ins.ReasonForCall, deref(ins.KnownInfo), ins.TaskInstructions} {
			if s = strings.TrimSpace(s); s != "" {
				parts = append(parts, s)
			}
		}
		task.Instruction = strings.Join(parts, "\n\n")
		if m := userIDText.FindStringSubmatch(deref(ins.KnownInfo) + "\n" + ins.ReasonForCall); m != nil {
			task.UserID = m[1]
		}
		task.InitialState = len(t.InitialState) > 0 && string(t.InitialState) != "null"
		if ec := t.EvaluationCriteria; ec != nil {
			for _, a := range ec.Actions {
				act := Action{Name: a.Name, Kwargs: a.Arguments}
				if act.Kwargs == nil {
					act.Kwargs = map[string]any{}
				}
				if a.Requestor == "user" {
					task.UserActions = append(task.UserActions, act)
					continue
				}
				task.Actions = append(task.Actions, act)
			}
			task.Outputs = slices.Clone(ec.CommunicateInfo)
		}
		if task.UserID == "" {
			for _, a := range task.Actions {
				if s, ok := a.Kwargs["user_id"].(string); ok {
					task.UserID = s
					break
				}
			}
		}
		out = append(out, task)
	}
	return out, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
