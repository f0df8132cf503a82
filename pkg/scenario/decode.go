package scenario

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// MaxSize bounds a scenario document: anything larger is refused unread.
const MaxSize = 1 << 20

// Decode reads one scenario strictly: unknown fields and trailing data are
// errors that name what is wrong, and so is a document over MaxSize.
func Decode(b []byte) (*Scenario, error) {
	if len(b) > MaxSize {
		return nil, fmt.Errorf("scenario: %d bytes is over the %d byte limit", len(b), MaxSize)
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	d.UseNumber()
	var sc Scenario
	if err := d.Decode(&sc); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			line := 1 + bytes.Count(b[:min(int(se.Offset), len(b))], []byte("\n"))
			return nil, fmt.Errorf("scenario: line %d: %w", line, err)
		}
		return nil, fmt.Errorf("scenario: %w", err)
	}
	if d.More() {
		return nil, errors.New("scenario: trailing data after the scenario object")
	}
	normalise(&sc)
	return &sc, nil
}

// normalise turns json.Number values into int64 or float64, as the world
// expects them.
func normalise(sc *Scenario) {
	for i := range sc.Setup {
		for j, a := range sc.Setup[i].Args {
			sc.Setup[i].Args[j] = number(a)
		}
	}
	for i := range sc.Ready {
		for j, a := range sc.Ready[i].Args {
			sc.Ready[i].Args[j] = number(a)
		}
		for _, r := range sc.Ready[i].Rows {
			for k, v := range r {
				r[k] = number(v)
			}
		}
	}
	calls := [][]Call{sc.Solution, sc.Tempting, sc.Missing}
	goals := [][]SubGoalRef{sc.SubGoals}
	for _, r := range sc.Then {
		calls = append(calls, r.Solution, r.Tempting, r.Missing)
		goals = append(goals, r.SubGoals)
	}
	for _, list := range calls {
		for _, c := range list {
			for k, v := range c.Args {
				c.Args[k] = number(v)
			}
		}
	}
	for _, list := range goals {
		for _, g := range list {
			for k, v := range g.Params {
				g.Params[k] = number(v)
			}
		}
	}
	sc.CallerID = number(sc.CallerID)
	if sc.Outbound != nil {
		for k, v := range sc.Outbound.Record {
			sc.Outbound.Record[k] = number(v)
		}
	}
}

func number(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	case []any:
		for i, e := range x {
			x[i] = number(e)
		}
	case map[string]any:
		for k, e := range x {
			x[k] = number(e)
		}
	}
	return v
}
