package plan

import (
	"context"

	"github.com/suitegen/suitegen/pkg/ground"
	"github.com/suitegen/suitegen/pkg/scenario"
)

// An amount the world computes (a booking's total, duty plus VAT plus a
// fee) is in no column, so grounding fills its argument with a guess and
// the handler refuses it, telling the number it wanted (ground.Want: its
// branch compared the call's number with its own). wanting rehearses such
// a call again with the wanted number in place of the guess, and leaves the
// number in the call, so the case's act carries it wherever its calls are
// rehearsed. Only an argument grounding found in no confirmed column is
// changed (rows of objects, an unbound or guessed number): one a column
// grounds is the caller's or the record's, and a refusal of another value
// of it is a way the world says no that cases test.

// wanting is a rehearser that settles computed amounts (see above).
type wanting struct {
	r  ground.Rehearser
	bs *ground.Bindings // read at each rehearsal: grounding fills them in
}

func (w *wanting) Rehearse(ctx context.Context, setup []scenario.Statement, calls []scenario.Call) ([]ground.Answer, error) {
	for try := 0; ; try++ {
		ans, err := w.r.Rehearse(ctx, setup, calls)
		if err != nil || try == ground.SettleTries || !w.settle(calls, ans) {
			return ans, err
		}
	}
}

func (w *wanting) RehearseEffect(ctx context.Context, setup []scenario.Statement, calls []scenario.Call) ([]ground.Answer, bool, error) {
	er, ok := w.r.(effectRehearser)
	if !ok {
		ans, err := w.Rehearse(ctx, setup, calls)
		return ans, true, err
	}
	for try := 0; ; try++ {
		ans, changed, err := er.RehearseEffect(ctx, setup, calls)
		if err != nil || try == ground.SettleTries || !w.settle(calls, ans) {
			return ans, changed, err
		}
	}
}

func (w *wanting) RehearseWrites(ctx context.Context, setup []scenario.Statement, calls []scenario.Call) ([]ground.Answer, []scenario.Statement, error) {
	wr, ok := w.r.(writesRehearser)
	if !ok {
		ans, err := w.Rehearse(ctx, setup, calls)
		return ans, nil, err
	}
	for try := 0; ; try++ {
		ans, writes, err := wr.RehearseWrites(ctx, setup, calls)
		if err != nil || try == ground.SettleTries || !w.settle(calls, ans) {
			return ans, writes, err
		}
	}
}

// settle puts, in the first call refused with a wanted number, that number
// in place of the argument that gave the call's (Bindings.Settle), and
// reports whether it did. calls[i].Args is replaced, not changed, so a map
// the caller shares elsewhere keeps its values.
func (w *wanting) settle(calls []scenario.Call, ans []ground.Answer) bool {
	if w.bs == nil {
		return false
	}
	for i, a := range ans {
		if i >= len(calls) || a.OK {
			continue
		}
		if a.Want == nil {
			return false // the first refusal is another's
		}
		args, _, ok := w.bs.Settle(calls[i].Tool, calls[i].Args, a.Want)
		if ok {
			calls[i].Args = args
		}
		return ok
	}
	return false
}
