package prove

import (
	"sync"
	"sync/atomic"

	"github.com/suitegen/suitegen/pkg/world"
)

// volatileMemo holds volatileIn's answer per statement text. A writer
// applies the same setup statements on every copy of every try and proof,
// and the search blanks the statement's literals and runs a backtracking
// regexp over it: a seventh of a writer's CPU before the answers were kept.
// Setup statements are few distinct texts (values travel as $n arguments);
// past volatileMemoMax texts the answer is computed each time.
var (
	volatileMemo  sync.Map // statement text → the volatile call it makes ("" for none)
	volatileMemoN atomic.Int64
)

const volatileMemoMax = 1 << 14

// volatileIn is the first call in sql (outside literals and comments) whose
// value differs between runs or whose effect outlives the copy, or "".
func volatileIn(sql string) string {
	if m, ok := volatileMemo.Load(sql); ok {
		return m.(string)
	}
	m := world.VolatileCall.FindString(sqlCode(sql))
	if volatileMemoN.Load() < volatileMemoMax {
		if _, loaded := volatileMemo.LoadOrStore(sql, m); !loaded {
			volatileMemoN.Add(1)
		}
	}
	return m
}
