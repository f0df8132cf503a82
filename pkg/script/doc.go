// Package script is the hermetic Starlark runtime that runs a contract's tool
// handlers and sub-goal checks.
//
// A contract is compiled once (Compile): every handler, sub-goal and lib file is
// parsed, its top level executed and its globals frozen, so that a call only
// invokes a function and frozen modules can be shared by any number of
// goroutines. Each call runs on its own starlark.Thread with:
//
//   - a step limit (Options.MaxSteps),
//   - a wall-clock limit (Options.Timeout) and the caller's context,
//   - a call-depth limit (Options.MaxDepth), checked every few steps so the
//     Go stack of the interpreter stays small,
//   - an allocation budget (Options.MaxAlloc) charged by every operation that
//     can grow data faster than one element per step: the binary operators
//     plus, times and percent and their augmented forms (rewritten at compile time into checked
//     calls), the string methods join, replace, format, split, splitlines,
//     elems, codepoints and the list/dict/set methods extend, update, union,
//     and the builtins str, repr, list, tuple, dict, set, sorted, zip,
//     enumerate, reversed, range and json.encode; each charge is checked
//     before the operation allocates,
//   - caps on what crosses the boundary: rows per query (Options.MaxRows) and
//     the encoded size of a result (Options.MaxResult).
//
// What is not bounded exactly: memory reached by growing data one element per
// step (append in a loop) is bounded only by the step limit; method values
// taken without calling them (f = s.join; f(x)) and getattr(s, "join") skip
// the allocation budget. Exceeding any limit is a crash whose message names
// the limit; it wraps ErrLimit.
//
// Values cross the boundary as JSON-like Go values (map[string]any, []any,
// string, int64, float64, bool, nil). A handler's result is encoded straight
// to JSON with dict keys in insertion order, since that is what the agent sees.
package script
