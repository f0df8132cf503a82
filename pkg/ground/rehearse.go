package ground

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/suitegen/suitegen/pkg/scenario"
)

// Rehearser plays calls after setup on a throwaway copy of the world.
// Grounding and planning learn from what the handlers answer, not from names.
type Rehearser interface {
	Rehearse(ctx context.Context, setup []scenario.Statement, calls []scenario.Call) ([]Answer, error)
}

// Answer is how one rehearsed call went.
type Answer struct {
	OK, Refused, Crash bool
	// Invalid: the arguments did not fit the tool's params, so the handler
	// never ran (a refusal that says nothing about the arguments' values).
	Invalid bool
	Wrote   bool
	Error   string
	Result  json.RawMessage
	// Read are the arguments the handler read.
	Read []string
}

// SetupError is a setup statement the world would not run: the minted rows
// broke a constraint of the schema.
type SetupError struct {
	Index int    // 0-based
	SQL   string // the statement
	Err   error  // what Postgres said
}

func (e *SetupError) Error() string {
	return fmt.Sprintf("setup statement %d (%s): %v", e.Index+1, e.SQL, e.Err)
}

func (e *SetupError) Unwrap() error { return e.Err }
