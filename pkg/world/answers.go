package world

import (
	"crypto/sha256"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/scenario"
)

// A handler is a function of its arguments and the rows it reads: Starlark
// with the contract's fixed clock, over a copy that only setup statements
// and earlier calls changed. So a call made again on a copy in the same
// state answers as it did before, and one that changed nothing (a look-up,
// a refusal, which is rolled back) need not be sent again. The prover
// plays the same state many times over (the solution, each counterfactual
// starting with the solution's look-ups, each value variant, and the next
// proof of a bucket with the same setup): answers keeps what such calls
// answered, by the copy's state and the call, and Call gives it back
// without a round trip. A copy's state is the hash of its schema, the setup
// batches it applied and the calls that wrote rows; anything else that may
// change it (Exec, Query) makes it unknown, and an unknown state is never
// looked up. A world whose schema or handlers name a function whose value
// differs between runs (the database's clock, randomness, sequences:
// VolatileCall) keeps no answers at all.
type answers struct {
	mu sync.Mutex
	m  map[string]CallResult
}

// maxAnswers bounds what a world keeps; past it the memory starts over.
const maxAnswers = 1 << 14

// VolatileCall is a SQL function whose value differs between runs of the
// same statement (the clock, randomness, sequences) or whose effect
// outlives the rolled-back copy (sequences, notifications, sleeps that hold
// the world).
var VolatileCall = regexp.MustCompile(`(?i)\b((now|clock_timestamp|statement_timestamp|transaction_timestamp|timeofday|random|random_normal|setseed|nextval|setval|currval|lastval|gen_random_uuid|uuid_generate_v[14]|pg_sleep|pg_sleep_for|pg_sleep_until|txid_current|pg_current_xact_id|pg_notify|dblink|pg_read_file|pg_read_binary_file|lo_import|lo_export)\s*\(|(current_timestamp|current_date|current_time|localtimestamp|localtime)\b)`)

// schemaCode is schema SQL that may change rows a call's statement does not
// say it changed (a trigger, a rule, a function a SELECT may call), or
// whose values differ from copy to copy: a sequence (serial, identity) is
// not rolled back with the copy, so the same insert gets another key on
// the next one.
var schemaCode = regexp.MustCompile(`(?i)\bcreate\s+(or\s+replace\s+)?(constraint\s+)?(trigger|function|procedure|rule|sequence)\b|\b(small|big)?serial\b|\bidentity\b`)

// newAnswers is a world's memory of answers, or nil when its schema or a
// Starlark source names a volatile call, or its schema holds code or
// sequences of its own (read as plain text: a mention in a comment is
// enough to keep none).
func newAnswers(c *contract.Contract) *answers {
	if VolatileCall.MatchString(c.SchemaSQL) || schemaCode.MatchString(c.SchemaSQL) {
		return nil
	}
	for _, src := range c.Sources {
		if VolatileCall.MatchString(src) {
			return nil
		}
	}
	return &answers{m: map[string]CallResult{}}
}

// Forget drops every answer the world kept: what follows is played as on a
// world that never answered anything (a benchmark's first proof of a
// scenario it warmed its sessions with).
func (w *World) Forget() {
	if a := w.answers; a != nil {
		a.mu.Lock()
		defer a.mu.Unlock()
		a.m = map[string]CallResult{}
	}
}

func (a *answers) get(key string) (CallResult, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	r, ok := a.m[key]
	return r, ok
}

func (a *answers) put(key string, r CallResult) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.m) >= maxAnswers {
		a.m = map[string]CallResult{}
	}
	r.Args = nil
	r.Result = slices.Clone(r.Result)
	r.ReadArgs = slices.Clone(r.ReadArgs)
	a.m[key] = r
}

// state is what a copy's rows are a function of, as far as it is known.
type state struct {
	sum   [sha256.Size]byte
	known bool
}

func startState(w *World, schema string) state {
	return state{sum: sha256.Sum256([]byte(schema)), known: w.answers != nil}
}

// then is the state after something (setup statements, a call that wrote)
// described by what.
func (s state) then(what string) state {
	h := sha256.New()
	h.Write(s.sum[:])
	h.Write([]byte(what))
	copy(s.sum[:], h.Sum(nil))
	return s
}

// setupText describes setup statements exactly: text and typed arguments.
func setupText(stmts []scenario.Statement) string {
	var b strings.Builder
	b.WriteString("setup")
	for _, st := range stmts {
		b.WriteString("\x00" + st.SQL + "\x00")
		writeValue(&b, st.Args)
	}
	return b.String()
}

// callText describes a call exactly: the tool and its typed arguments.
func callText(tool string, args map[string]any) string {
	var b strings.Builder
	b.WriteString("call\x00" + tool + "\x00")
	writeValue(&b, args)
	return b.String()
}

// writeValue writes v with the Go type of every value, so that arguments a
// handler would see differently (1 and 1.0, "1" and 1) never share a key.
func writeValue(b *strings.Builder, v any) {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b.WriteString("{")
		for _, k := range keys {
			fmt.Fprintf(b, "%q:", k)
			writeValue(b, x[k])
			b.WriteString(",")
		}
		b.WriteString("}")
	case []any:
		b.WriteString("[")
		for _, e := range x {
			writeValue(b, e)
			b.WriteString(",")
		}
		b.WriteString("]")
	default:
		fmt.Fprintf(b, "%T:%#v", v, v)
	}
}
