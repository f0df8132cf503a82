package script

import (
	"math/bits"
	"strings"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"go.starlark.net/starlark"
)

// What values cost, in bytes of Go heap, measured on go.starlark.net (see
// TestAllocationMeasured): the budget is charged with these before an
// operation allocates, so a charge is an upper bound of what it takes.
const (
	slotSize  = 16  // one element of a list or tuple (an interface value)
	strSize   = 16  // a string or bytes header boxed in an interface
	listSize  = 48  // a list or tuple object, without its elements
	tupleSize = 24  // a tuple's slice header
	entrySize = 160 // one dict or set entry, with the hash table's growth
	dictSize  = 640 // an empty dict or set (its first bucket is inline)
)

// maxIntBits bounds integers: multiplying, shifting and printing huge
// integers is slow long before it is big.
const maxIntBits = 1 << 16

// sizeOf estimates the bytes a value owns at its top level.
func sizeOf(v starlark.Value) int64 {
	switch v := v.(type) {
	case starlark.String:
		return int64(len(v))
	case starlark.Bytes:
		return int64(len(v))
	case starlark.Int:
		if _, ok := v.Int64(); ok {
			return 0
		}
		return int64(v.BigInt().BitLen()/8 + 8)
	case *starlark.Dict:
		return entrySize * int64(v.Len())
	case *starlark.Set:
		return entrySize * int64(v.Len())
	case starlark.IterableMapping:
		if s, ok := v.(starlark.Sequence); ok {
			return entrySize * int64(s.Len())
		}
	case starlark.Sequence:
		return slotSize * int64(v.Len())
	}
	return 0
}

// lenOf is how many elements iterating v yields, counting at most until
// limit (an iterable without a length is walked, so its cost is bounded by
// what it already holds).
func lenOf(v starlark.Value, limit int64) int64 {
	switch x := v.(type) {
	case starlark.Sequence:
		return int64(x.Len())
	case starlark.Iterable:
		it := x.Iterate()
		defer it.Done()
		var n int64
		var e starlark.Value
		for n <= limit && it.Next(&e) {
			n++
		}
		return n
	}
	return 0
}

func mulSize(a, n int64) int64 {
	if a <= 0 || n <= 0 {
		return 0
	}
	hi, lo := bits.Mul64(uint64(a), uint64(n))
	if hi != 0 || lo > 1<<62 {
		return 1 << 62
	}
	return int64(lo)
}

func addSize(xs ...int64) int64 {
	var n int64
	for _, x := range xs {
		if x < 0 || n+x > 1<<62 {
			return 1 << 62
		}
		n += x
	}
	return n
}

// footprint is an upper bound of the bytes v holds, walking at most until
// the bound passes limit. Values shared within v are counted each time
// they are reached (a conservative bound).
func footprint(v starlark.Value, limit int64) int64 {
	var total int64
	var walk func(v starlark.Value, depth int)
	walk = func(v starlark.Value, depth int) {
		if total > limit || depth > 64 {
			return
		}
		total += strSize + sizeOf(v)
		switch x := v.(type) {
		case starlark.String, starlark.Bytes, starlark.Int:
		case starlark.IterableMapping:
			total += dictSize
			for k, val := range entries(x) {
				walk(k, depth+1)
				walk(val, depth+1)
				if total > limit {
					return
				}
			}
		case starlark.Iterable:
			total += listSize
			it := x.Iterate()
			defer it.Done()
			var e starlark.Value
			for it.Next(&e) {
				walk(e, depth+1)
				if total > limit {
					return
				}
			}
		}
	}
	walk(v, 0)
	return total
}

// reprBound is an upper bound of the length of str(v) or json.encode(v),
// walking at most until the bound passes limit (so its cost is bounded by
// limit, however much the value shares).
func reprBound(v starlark.Value, limit int64) int64 {
	var total int64
	var path []unsafe.Pointer
	var walk func(v starlark.Value)
	walk = func(v starlark.Value) {
		if total > limit {
			return
		}
		switch x := v.(type) {
		case starlark.String:
			total += 6*int64(len(x)) + 2 // json escapes \u00XX take six bytes per byte
			return
		case starlark.Bytes:
			total += 4*int64(len(x)) + 3
			return
		case starlark.Int:
			total += sizeOf(x)*3 + 24
			return
		case starlark.NoneType, starlark.Bool, starlark.Float:
			total += 32
			return
		}
		var ptr unsafe.Pointer
		switch x := v.(type) {
		case *starlark.List:
			ptr = unsafe.Pointer(x)
		case *starlark.Dict:
			ptr = unsafe.Pointer(x)
		case *starlark.Set:
			ptr = unsafe.Pointer(x)
		}
		if ptr != nil {
			for _, p := range path {
				if p == ptr {
					total += 8 // printed as [...]
					return
				}
			}
			path = append(path, ptr)
			defer func() { path = path[:len(path)-1] }()
		}
		switch x := v.(type) {
		case starlark.IterableMapping:
			total += 2
			for k, val := range entries(x) {
				total += 4
				walk(k)
				walk(val)
				if total > limit {
					return
				}
			}
		case starlark.Iterable:
			total += 2
			it := x.Iterate()
			defer it.Done()
			var e starlark.Value
			for it.Next(&e) {
				total += 2
				walk(e)
				if total > limit {
					return
				}
			}
		default:
			total += 64 + int64(len(v.Type()))
		}
	}
	walk(v)
	return total
}

func entries(m starlark.IterableMapping) func(func(starlark.Value, starlark.Value) bool) {
	return func(yield func(starlark.Value, starlark.Value) bool) {
		if d, ok := m.(*starlark.Dict); ok {
			for k, v := range d.Entries() {
				if !yield(k, v) {
					return
				}
			}
			return
		}
		for _, it := range m.Items() {
			if !yield(it[0], it[1]) {
				return
			}
		}
	}
}

// costFunc is what one call of a method allocates, computed before the call.
type costFunc func(st *callState, recv starlark.Value, args starlark.Tuple, kwargs []starlark.Tuple) int64

func free(*callState, starlark.Value, starlark.Tuple, []starlark.Tuple) int64 { return 0 }

func fixed(n int64) costFunc {
	return func(*callState, starlark.Value, starlark.Tuple, []starlark.Tuple) int64 { return n }
}

// argsLen is how many elements the positional arguments hold together.
func argsLen(st *callState, args starlark.Tuple, kwargs []starlark.Tuple) int64 {
	var n int64
	for _, a := range args {
		n = addSize(n, lenOf(a, st.remaining()/slotSize))
	}
	return addSize(n, int64(len(kwargs)))
}

func recvLen(recv starlark.Value) int64 {
	if s, ok := recv.(starlark.Sequence); ok {
		return int64(s.Len())
	}
	return 0
}

func strOf(recv starlark.Value) string {
	s, _ := recv.(starlark.String)
	return string(s)
}

// methodCosts lists every method of every built-in type: a method that is
// missing here is charged as if it copied its receiver and arguments twice
// (see unknownMethodCost), and TestEveryMethodCosted fails.
var methodCosts = map[string]map[string]costFunc{
	"string": {
		"capitalize": stringCopy, "lower": stringCopy, "upper": stringCopy, "title": stringCopy,
		"count": free, "endswith": free, "find": free, "index": free, "rfind": free, "rindex": free, "startswith": free,
		"isalnum": free, "isalpha": free, "isdigit": free, "islower": free, "isspace": free, "istitle": free, "isupper": free,
		// lazy iterables over the receiver
		"codepoint_ords": fixed(64), "codepoints": fixed(64), "elem_ords": fixed(64), "elems": fixed(64),
		// substrings share the receiver's bytes
		"lstrip": fixed(strSize), "rstrip": fixed(strSize), "strip": fixed(strSize),
		"removeprefix": fixed(strSize), "removesuffix": fixed(strSize),
		"partition": fixed(listSize + 3*(slotSize+strSize)), "rpartition": fixed(listSize + 3*(slotSize+strSize)),
		"format": stringFormat, "join": stringJoin, "replace": stringReplace,
		"split": stringSplit, "rsplit": stringSplit, "splitlines": stringSplitlines,
	},
	"bytes": {"elems": fixed(64)},
	"list": {
		"append": fixed(2 * slotSize), "insert": fixed(2 * slotSize), // amortised growth
		"extend": func(st *callState, _ starlark.Value, args starlark.Tuple, kw []starlark.Tuple) int64 {
			return mulSize(2*slotSize, argsLen(st, args, kw))
		},
		"clear": free, "index": free, "pop": free, "remove": free,
	},
	"dict": {
		"clear": free, "get": free, "pop": free,
		"popitem":    fixed(listSize + 2*slotSize),
		"setdefault": fixed(entrySize),
		"items": func(_ *callState, recv starlark.Value, _ starlark.Tuple, _ []starlark.Tuple) int64 {
			return listSize + mulSize(recvLen(recv), slotSize+listSize+2*slotSize)
		},
		"keys": func(_ *callState, recv starlark.Value, _ starlark.Tuple, _ []starlark.Tuple) int64 {
			return listSize + mulSize(recvLen(recv), slotSize)
		},
		"values": func(_ *callState, recv starlark.Value, _ starlark.Tuple, _ []starlark.Tuple) int64 {
			return listSize + mulSize(recvLen(recv), slotSize)
		},
		"update": func(st *callState, _ starlark.Value, args starlark.Tuple, kw []starlark.Tuple) int64 {
			return mulSize(entrySize, argsLen(st, args, kw))
		},
	},
	"set": {
		"add": fixed(entrySize), "clear": free, "discard": free, "pop": free, "remove": free,
		"issubset": setFromArgs, "issuperset": setFromArgs, "update": setFromArgs,
		"difference": setWithRecv, "intersection": setWithRecv, "symmetric_difference": setWithRecv, "union": setWithRecv,
	},
}

func setFromArgs(st *callState, _ starlark.Value, args starlark.Tuple, kw []starlark.Tuple) int64 {
	return mulSize(entrySize, argsLen(st, args, kw))
}

func setWithRecv(st *callState, recv starlark.Value, args starlark.Tuple, kw []starlark.Tuple) int64 {
	return addSize(dictSize, mulSize(entrySize, addSize(recvLen(recv), argsLen(st, args, kw))))
}

// stringCopy: case mappings can grow a rune by half its bytes.
func stringCopy(_ *callState, recv starlark.Value, _ starlark.Tuple, _ []starlark.Tuple) int64 {
	return strSize + 2*int64(len(strOf(recv)))
}

func stringJoin(st *callState, recv starlark.Value, args starlark.Tuple, _ []starlark.Tuple) int64 {
	s := strOf(recv)
	if len(args) != 1 {
		return 0
	}
	it, ok := args[0].(starlark.Iterable)
	if !ok {
		return 0
	}
	limit := st.remaining()
	var n, count int64
	iter := it.Iterate()
	defer iter.Done()
	var e starlark.Value
	for iter.Next(&e) {
		count++
		n = addSize(n, sizeOf(e), int64(len(s)))
		if n > limit {
			break
		}
	}
	return strSize + n
}

func stringReplace(_ *callState, recv starlark.Value, args starlark.Tuple, _ []starlark.Tuple) int64 {
	s := strOf(recv)
	if len(args) < 2 {
		return 0
	}
	old, ok1 := args[0].(starlark.String)
	nw, ok2 := args[1].(starlark.String)
	if !ok1 || !ok2 || len(nw) <= len(old) {
		return strSize + int64(len(s))
	}
	var cnt int64
	if old == "" {
		cnt = int64(utf8.RuneCountInString(s)) + 1
	} else {
		cnt = int64(strings.Count(s, string(old)))
	}
	if len(args) > 2 {
		if c, ok := args[2].(starlark.Int); ok {
			if k, ok := c.Int64(); ok && k >= 0 && k < cnt {
				cnt = k
			}
		}
	}
	return strSize + addSize(int64(len(s)), mulSize(cnt, int64(len(nw)-len(old))))
}

func stringFormat(st *callState, recv starlark.Value, args starlark.Tuple, kwargs []starlark.Tuple) int64 {
	s := strOf(recv)
	vals := append(starlark.Tuple{}, args...)
	for _, kv := range kwargs {
		vals = append(vals, kv[1])
	}
	var n int64
	for _, v := range vals {
		n = addSize(n, reprBound(v, st.remaining()))
	}
	return strSize + addSize(int64(len(s)), mulSize(int64(strings.Count(s, "{")), n))
}

func stringSplit(_ *callState, recv starlark.Value, args starlark.Tuple, kwargs []starlark.Tuple) int64 {
	s := strOf(recv)
	var pieces int64
	sep, ok := starlark.AsString(first(args, kwargs, "sep"))
	if ok && sep != "" {
		pieces = int64(strings.Count(s, sep)) + 1
	} else {
		inField := false
		for _, r := range s {
			space := unicode.IsSpace(r)
			if !space && !inField {
				pieces++
			}
			inField = !space
		}
	}
	return listSize + mulSize(pieces+1, slotSize+strSize)
}

func stringSplitlines(_ *callState, recv starlark.Value, _ starlark.Tuple, _ []starlark.Tuple) int64 {
	s := strOf(recv)
	pieces := int64(strings.Count(s, "\n")+strings.Count(s, "\r")) + 1
	return listSize + mulSize(pieces, slotSize+strSize)
}

func first(args starlark.Tuple, kwargs []starlark.Tuple, name string) starlark.Value {
	if len(args) > 0 {
		return args[0]
	}
	for _, kv := range kwargs {
		if k, _ := starlark.AsString(kv[0]); k == name {
			return kv[1]
		}
	}
	return nil
}

// unknownMethodCost is the charge for a method of a built-in type this
// table does not know (a newer Starlark): twice its receiver and arguments.
func unknownMethodCost(st *callState, recv starlark.Value, args starlark.Tuple, kwargs []starlark.Tuple) int64 {
	n := footprint(recv, st.remaining())
	for _, a := range args {
		n = addSize(n, footprint(a, st.remaining()))
	}
	for _, kv := range kwargs {
		n = addSize(n, footprint(kv[1], st.remaining()))
	}
	return mulSize(n, 2)
}

// methodCost is what recv.name(args) allocates. Methods of values this
// package defines (db, world, args) and of modules charge inside themselves.
func methodCost(st *callState, recv starlark.Value, name string, args starlark.Tuple, kwargs []starlark.Tuple) int64 {
	switch recv.(type) {
	case starlark.String, starlark.Bytes, *starlark.List, *starlark.Dict, *starlark.Set:
	default:
		return 0
	}
	if f, ok := methodCosts[recv.Type()][name]; ok {
		return f(st, recv, args, kwargs)
	}
	return unknownMethodCost(st, recv, args, kwargs)
}

// jsonDecodeCost bounds what json.decode builds from s: each object, array,
// member and element is a Go allocation of its own.
func jsonDecodeCost(s string) int64 {
	var objects, arrays, members int64
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '{':
			objects++
		case '[':
			arrays++
		case ',', ':':
			members++
		}
	}
	return addSize(2*int64(len(s)), mulSize(objects, dictSize), mulSize(arrays, listSize+slotSize), mulSize(members, entrySize))
}
