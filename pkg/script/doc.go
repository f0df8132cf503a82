// Package script is the hermetic Starlark runtime that runs a contract's tool
// handlers and sub-goal checks.
//
// A contract is compiled once (Compile): every handler, sub-goal and lib file is
// parsed, its top level executed and its globals frozen, so that a call only
// invokes a function and frozen modules can be shared by any number of
// goroutines. Each call runs on its own starlark.Thread with:
//
//   - a step limit (Options.MaxSteps) and a limit on database round trips
//     (Options.MaxQueries): work, counted the same on a busy machine,
//   - a wall-clock backstop (Options.Timeout) and the caller's context,
//   - a call-depth limit (Options.MaxDepth), checked every few steps so the
//     Go stack of the interpreter stays small,
//   - an allocation budget (Options.MaxAlloc) charged, before the memory is
//     taken, by every operation that can allocate more than a constant in
//     one step: the binary operators + * % | & ^ - << and their augmented
//     forms, slicing, dict literals and comprehensions (rewritten at compile
//     time into checked calls), every method of str, bytes, list, dict and
//     set (called at once or taken as a value, x.f or getattr(x, "f")), the
//     builtins list, tuple, dict, set, sorted, reversed, zip, enumerate,
//     bytes, int, str, repr, fail, dir, json.encode and json.decode (also
//     when passed around as values), database parameters and query rows,
//     and the world's fields a check reads; integers are capped at 65536
//     bits,
//   - caps on what crosses the boundary: rows per query (Options.MaxRows) and
//     the encoded size of a result (Options.MaxResult).
//
// What the budget does not count: values that take a constant each (a list
// slot, a tuple, a closure, a small string), which one step can make only
// one of, so the step limit bounds them (TestStepBoundedGrowth measures at
// most 64 bytes a step); and rows the database driver reads before they are
// counted (MaxRows bounds their number, not their size). Exceeding any limit
// is a crash whose message names the limit; it wraps ErrLimit.
//
// Values cross the boundary as JSON-like Go values (map[string]any, []any,
// string, int64, float64, bool, nil). A handler's result is encoded straight
// to JSON with dict keys in insertion order, since that is what the agent sees.
package script
