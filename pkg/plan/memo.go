package plan

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/suitegen/suitegen/pkg/ground"
	"github.com/suitegen/suitegen/pkg/scenario"
)

// memo keeps each rehearsal's answers for the length of one Derive. The
// world is frozen (every copy is rolled back), so the same setup and calls
// answer the same way every time; planning asks many of them more than once
// (a chain's first rows when picking the chain and again when playing it,
// the first templates of a level when checking lookups and minting).
type memo struct {
	r ground.Rehearser
	// cache: keep answers (off when every rehearsal must be played, to
	// count them); crashes is told every crash a played rehearsal meets.
	cache   bool
	crashes *crashLog
	mu      sync.Mutex
	// answers: kind, setup and calls as JSON -> what they answered.
	answers map[string]memoEntry
}

type memoEntry struct {
	ans     []ground.Answer
	changed bool
}

func newMemo(r ground.Rehearser, cache bool, crashes *crashLog) *memo {
	return &memo{r: r, cache: cache, crashes: crashes, answers: map[string]memoEntry{}}
}

// memoKey names a rehearsal: its values as JSON and their Go types (a
// handler sees 5 and 5.0, or a string and a time, as different values); ok
// is false when it cannot be named (it is then rehearsed every time).
func memoKey(kind string, setup []scenario.Statement, calls []scenario.Call) (string, bool) {
	b, err := json.Marshal(struct {
		K string               `json:"k"`
		S []scenario.Statement `json:"s"`
		C []scenario.Call      `json:"c"`
	}{kind, setup, calls})
	if err != nil {
		return "", false
	}
	var sb strings.Builder
	sb.Write(b)
	for _, st := range setup {
		typesOf(&sb, st.Args)
	}
	for _, c := range calls {
		typesOf(&sb, c.Args)
	}
	return sb.String(), true
}

// typesOf writes the Go type of v and of everything it holds, maps by
// sorted key.
func typesOf(sb *strings.Builder, v any) {
	switch x := v.(type) {
	case map[string]any:
		sb.WriteString("{")
		for _, k := range slices.Sorted(maps.Keys(x)) {
			sb.WriteString(k)
			sb.WriteString(":")
			typesOf(sb, x[k])
		}
		sb.WriteString("}")
	case []any:
		sb.WriteString("[")
		for _, e := range x {
			typesOf(sb, e)
		}
		sb.WriteString("]")
	default:
		fmt.Fprintf(sb, "%T,", v)
	}
}

func (m *memo) get(key string) (memoEntry, bool) {
	if !m.cache {
		return memoEntry{}, false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.answers[key]
	// Callers get their own slice: the kept one is never handed out.
	return memoEntry{ans: slices.Clone(e.ans), changed: e.changed}, ok
}

func (m *memo) put(key string, e memoEntry) {
	if !m.cache {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.answers[key] = memoEntry{ans: slices.Clone(e.ans), changed: e.changed}
}

// Rehearse answers from the memo, or rehearses and keeps what answered.
// Errors are not kept.
func (m *memo) Rehearse(ctx context.Context, setup []scenario.Statement, calls []scenario.Call) ([]ground.Answer, error) {
	key, ok := memoKey("rehearse", setup, calls)
	if ok {
		if e, hit := m.get(key); hit {
			return e.ans, nil
		}
	}
	ans, err := m.r.Rehearse(ctx, setup, calls)
	if err == nil {
		m.crashes.note(setup, calls, ans)
	}
	if err == nil && ok {
		m.put(key, memoEntry{ans: ans})
	}
	return ans, err
}

// RehearseEffect is Rehearse with whether the calls changed the world;
// changed is true when the rehearser cannot tell.
func (m *memo) RehearseEffect(ctx context.Context, setup []scenario.Statement, calls []scenario.Call) ([]ground.Answer, bool, error) {
	er, can := m.r.(effectRehearser)
	if !can {
		ans, err := m.Rehearse(ctx, setup, calls)
		return ans, true, err
	}
	key, ok := memoKey("effect", setup, calls)
	if ok {
		if e, hit := m.get(key); hit {
			return e.ans, e.changed, nil
		}
	}
	ans, changed, err := er.RehearseEffect(ctx, setup, calls)
	if err == nil {
		m.crashes.note(setup, calls, ans)
	}
	if err == nil && ok {
		m.put(key, memoEntry{ans: ans, changed: changed})
	}
	return ans, changed, err
}

// RehearseWrites passes through to the rehearser when it returns what the
// calls wrote (writesRehearser); it is asked a few times per act, so it is
// not kept. Without it the memo says nothing was written.
func (m *memo) RehearseWrites(ctx context.Context, setup []scenario.Statement, calls []scenario.Call) ([]ground.Answer, []scenario.Statement, error) {
	wr, ok := m.r.(writesRehearser)
	if !ok {
		ans, err := m.Rehearse(ctx, setup, calls)
		return ans, nil, err
	}
	ans, writes, err := wr.RehearseWrites(ctx, setup, calls)
	if err == nil {
		m.crashes.note(setup, calls, ans)
	}
	return ans, writes, err
}
