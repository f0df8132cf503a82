package ground

import (
	"context"
	"encoding/json"

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
	// Branch is the handler's refusal branch (file:line) a refused call
	// took, "" otherwise: two refusals of one act on different branches are
	// two different ways the world says no.
	Branch string
	// Want, for a refusal whose branch compared a number of the call's
	// with one the handler computed, is the two: the call goes through
	// with Value in Arg's place.
	Want *Want
}

// Want is a refused call's number (Arg: an argument, or a sum of them)
// and the number the handler computed and compared it with (Value); each
// an int64 or a float64.
type Want struct {
	Arg   any `json:"arg"`
	Value any `json:"value"`
}
