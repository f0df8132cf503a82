package ground

import (
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
)

// SettleTries bounds the rehearsals that settle a call's computed numbers:
// each learns one.
const SettleTries = 3

// Settle returns a copy of args (a call of tool) with want.Value in place of
// the first number equal to want.Arg, by sorted argument name then
// position, of an argument whose binding Settles, and that argument's name;
// false when none holds it. args is not changed.
func (bs Bindings) Settle(tool string, args map[string]any, want *Want) (map[string]any, string, bool) {
	for _, k := range slices.Sorted(maps.Keys(args)) {
		if bd, ok := bs.Of(tool, k); !ok || !bd.Settles() {
			continue
		}
		if v, ok := SwapWant(CloneValue(args[k]), want); ok {
			out := maps.Clone(args)
			out[k] = v
			return out, k, true
		}
	}
	return nil, "", false
}

// SwapWant returns v (an argument's value) with its first number, by
// sorted key then position, that equals want.Arg set to want.Value; false
// when v holds no such number. Maps and lists in v are changed in place.
func SwapWant(v any, want *Want) (any, bool) {
	from, ok1 := asFloat(want.Arg)
	to, ok2 := asFloat(want.Value)
	if !ok1 || !ok2 || from == to {
		return nil, false
	}
	return swapLeaf(v, from, to)
}

// swapLeaf returns v with its first number equal to from set to to, in
// the leaf's own form (an integer stays one where to is whole, a numeric
// string stays a string).
func swapLeaf(v any, from, to float64) (any, bool) {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if nv, ok := swapLeaf(x[k], from, to); ok {
				x[k] = nv
				return x, true
			}
		}
	case []any:
		for i := range x {
			if nv, ok := swapLeaf(x[i], from, to); ok {
				x[i] = nv
				return x, true
			}
		}
	default:
		f, ok := asFloat(v)
		if !ok || math.Abs(f-from) > 1e-9 {
			return nil, false
		}
		whole := to == math.Trunc(to) && math.Abs(to) < 1<<53
		switch v.(type) {
		case string:
			return strconv.FormatFloat(to, 'f', -1, 64), true
		case int, int64, int32:
			if whole {
				return int64(to), true
			}
		}
		return to, true
	}
	return nil, false
}
