package script

import (
	"fmt"
	"math/bits"
	"strings"
	"unicode/utf8"
	"unsafe"

	"go.starlark.net/lib/json"
	"go.starlark.net/lib/math"
	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
	"go.starlark.net/syntax"
)

// maxIntBits bounds integer products: multiplying huge integers is slow long
// before it is big.
const maxIntBits = 1 << 16

// elemSize is what one element of a list, tuple or set costs (an interface value).
const elemSize = 16

func (p *Programs) makePredeclared() starlark.StringDict {
	d := starlark.StringDict{
		"refuse": starlark.NewBuiltin("refuse", builtinRefuse),
		"round":  starlark.NewBuiltin("round", builtinRound),
		"now":    starlark.String(p.opts.Now),
		"print": starlark.NewBuiltin("print", func(*starlark.Thread, *starlark.Builtin, starlark.Tuple, []starlark.Tuple) (starlark.Value, error) {
			return starlark.None, nil
		}),
		"math": math.Module,
		"json": &starlarkstruct.Module{Name: "json", Members: starlark.StringDict{
			"encode": starlark.NewBuiltin("json.encode", builtinJSONEncode),
			"decode": json.Module.Members["decode"],
		}},
		"str":    starlark.NewBuiltin("str", builtinStr),
		"repr":   starlark.NewBuiltin("repr", builtinRepr),
		fnBin:    starlark.NewBuiltin(fnBin, builtinBin),
		fnIAdd:   starlark.NewBuiltin(fnIAdd, builtinIAdd),
		fnCharge: starlark.NewBuiltin(fnCharge, builtinCharge),
		fnMethod: starlark.NewBuiltin(fnMethod, builtinMethod),
	}
	for _, name := range []string{"list", "tuple", "dict", "set", "sorted", "zip", "enumerate", "reversed"} {
		d[name] = copyingBuiltin(name)
	}
	d.Freeze()
	return d
}

func builtinRefuse(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var msg string
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &msg); err != nil {
		return nil, err
	}
	return nil, &Refusal{Message: msg}
}

// sizeOf estimates the bytes a value occupies at its top level.
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
		return int64(v.BigInt().BitLen() / 8)
	case starlark.IterableMapping:
		if s, ok := v.(starlark.Sequence); ok {
			return 2 * elemSize * int64(s.Len())
		}
	case starlark.Sequence:
		return elemSize * int64(v.Len())
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
			total += 4*int64(len(x)) + 2 // escapes may take four bytes per byte
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

// chargeRepr charges an upper bound of the text that printing vs produces.
func chargeRepr(th *starlark.Thread, times int64, vs ...starlark.Value) error {
	st := stateOf(th)
	limit := st.remaining()
	var n int64
	for _, v := range vs {
		n += reprBound(v, limit)
	}
	return st.charge(th, mulSize(n, max(times, 1)))
}

func builtinStr(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var x starlark.Value
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &x); err != nil {
		return nil, err
	}
	if s, ok := x.(starlark.String); ok {
		return s, nil
	}
	if err := chargeRepr(th, 1, x); err != nil {
		return nil, err
	}
	return starlark.String(x.String()), nil
}

func builtinRepr(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var x starlark.Value
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &x); err != nil {
		return nil, err
	}
	if err := chargeRepr(th, 1, x); err != nil {
		return nil, err
	}
	return starlark.String(x.String()), nil
}

func builtinJSONEncode(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if err := chargeRepr(th, 1, args...); err != nil {
		return nil, err
	}
	return starlark.Call(th, json.Module.Members["encode"], args, kwargs)
}

// copyingBuiltin wraps a universal builtin that copies its arguments into a
// new collection, charging the copy first.
func copyingBuiltin(name string) *starlark.Builtin {
	orig := starlark.Universe[name]
	return starlark.NewBuiltin(name, func(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		var n int64
		for _, a := range args {
			if s, ok := a.(starlark.Sequence); ok {
				n += elemSize * int64(s.Len())
				if _, isMap := a.(starlark.IterableMapping); isMap {
					n += elemSize * int64(s.Len())
				}
			}
		}
		for _, kv := range kwargs {
			_ = kv
			n += 2 * elemSize
		}
		if err := stateOf(th).charge(th, n); err != nil {
			return nil, err
		}
		return starlark.Call(th, orig, args, kwargs)
	})
}

func opOf(v starlark.Value) (syntax.Token, error) {
	i, ok := v.(starlark.Int)
	if !ok {
		return 0, fmt.Errorf("internal: bad operator %v", v)
	}
	n, _ := i.Int64()
	return syntax.Token(n), nil
}

// binCost is what x op y allocates, computed before doing it.
func binCost(th *starlark.Thread, op syntax.Token, x, y starlark.Value) (int64, error) {
	switch op {
	case syntax.PLUS:
		return sizeOf(x) + sizeOf(y), nil
	case syntax.STAR:
		if xi, ok := x.(starlark.Int); ok {
			if yi, ok := y.(starlark.Int); ok {
				_, xs := xi.Int64()
				_, ys := yi.Int64()
				if xs && ys {
					return 0, nil
				}
				if bits := xi.BigInt().BitLen() + yi.BigInt().BitLen(); bits > maxIntBits {
					return 0, stateOf(th).limit(th, fmt.Sprintf("allocation limit exceeded (integers are limited to %d bits)", maxIntBits))
				}
				return sizeOf(xi) + sizeOf(yi) + 16, nil
			}
			x, y = y, x // n * seq
		}
		if n, ok := y.(starlark.Int); ok {
			k, ok := n.Int64()
			if !ok {
				return 1 << 62, nil
			}
			return mulSize(sizeOf(x), k), nil
		}
	case syntax.PERCENT:
		if s, ok := x.(starlark.String); ok {
			n := int64(strings.Count(string(s), "%"))
			st := stateOf(th)
			return int64(len(s)) + mulSize(n, reprBound(y, st.remaining())), nil
		}
	}
	return 0, nil
}

func builtinBin(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if len(args) != 3 || len(kwargs) != 0 {
		return nil, fmt.Errorf("internal: %s wants 3 arguments", b.Name())
	}
	op, err := opOf(args[0])
	if err != nil {
		return nil, err
	}
	x, y := args[1], args[2]
	cost, err := binCost(th, op, x, y)
	if err != nil {
		return nil, err
	}
	if err := stateOf(th).charge(th, cost); err != nil {
		return nil, err
	}
	return starlark.Binary(op, x, y)
}

// builtinIAdd is v += y for a plain variable: lists extend in place, as the
// interpreter would do.
func builtinIAdd(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if len(args) != 2 || len(kwargs) != 0 {
		return nil, fmt.Errorf("internal: %s wants 2 arguments", b.Name())
	}
	x, y := args[0], args[1]
	if l, ok := x.(*starlark.List); ok {
		if _, ok := y.(starlark.Iterable); ok {
			if err := stateOf(th).charge(th, sizeOf(y)); err != nil {
				return nil, err
			}
			ext, err := l.Attr("extend")
			if err != nil {
				return nil, err
			}
			if _, err := starlark.Call(th, ext, starlark.Tuple{y}, nil); err != nil {
				return nil, err
			}
			return l, nil
		}
	}
	if err := stateOf(th).charge(th, sizeOf(x)+sizeOf(y)); err != nil {
		return nil, err
	}
	return starlark.Binary(syntax.PLUS, x, y)
}

func builtinCharge(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if len(args) != 1 || len(kwargs) != 0 {
		return nil, fmt.Errorf("internal: %s wants 1 argument", b.Name())
	}
	if err := stateOf(th).charge(th, sizeOf(args[0])); err != nil {
		return nil, err
	}
	return args[0], nil
}

// builtinMethod is recv.name(args...) with the allocation charged first.
func builtinMethod(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if len(args) < 2 {
		return nil, fmt.Errorf("internal: %s wants a receiver and a name", b.Name())
	}
	recv := args[0]
	nameV, ok := args[1].(starlark.String)
	if !ok {
		return nil, fmt.Errorf("internal: %s wants a method name", b.Name())
	}
	name := string(nameV)
	rest := args[2:]
	ha, ok := recv.(starlark.HasAttrs)
	if !ok {
		return nil, fmt.Errorf("%s has no .%s field or method", recv.Type(), name)
	}
	fn, err := ha.Attr(name)
	if err != nil {
		return nil, err
	}
	if fn == nil {
		return nil, fmt.Errorf("%s has no .%s field or method", recv.Type(), name)
	}
	if err := stateOf(th).charge(th, methodCost(th, recv, name, rest, kwargs)); err != nil {
		return nil, err
	}
	return starlark.Call(th, fn, rest, kwargs)
}

func methodCost(th *starlark.Thread, recv starlark.Value, name string, args starlark.Tuple, kwargs []starlark.Tuple) int64 {
	s, isStr := recv.(starlark.String)
	switch name {
	case "join":
		if !isStr || len(args) != 1 {
			return 0
		}
		it, ok := args[0].(starlark.Iterable)
		if !ok {
			return 0
		}
		var n, count int64
		iter := it.Iterate()
		defer iter.Done()
		var e starlark.Value
		for iter.Next(&e) {
			count++
			n += sizeOf(e)
			if n > 1<<62 {
				break
			}
		}
		return n + mulSize(int64(len(s)), count)
	case "replace":
		if !isStr || len(args) < 2 {
			return 0
		}
		old, ok1 := args[0].(starlark.String)
		nw, ok2 := args[1].(starlark.String)
		if !ok1 || !ok2 || len(nw) <= len(old) {
			return int64(len(s))
		}
		var cnt int64
		if old == "" {
			cnt = int64(utf8.RuneCountInString(string(s))) + 1
		} else {
			cnt = int64(strings.Count(string(s), string(old)))
		}
		if len(args) > 2 {
			if c, ok := args[2].(starlark.Int); ok {
				if k, ok := c.Int64(); ok && k >= 0 && k < cnt {
					cnt = k
				}
			}
		}
		return int64(len(s)) + mulSize(cnt, int64(len(nw)-len(old)))
	case "format":
		if !isStr {
			return 0
		}
		vals := append(starlark.Tuple{}, args...)
		for _, kv := range kwargs {
			vals = append(vals, kv[1])
		}
		st := stateOf(th)
		var n int64
		for _, v := range vals {
			n += reprBound(v, st.remaining())
		}
		return int64(len(s)) + mulSize(int64(strings.Count(string(s), "{")), n)
	case "split", "rsplit", "splitlines", "elems", "codepoints", "elem_ords", "codepoint_ords":
		if !isStr {
			return 0
		}
		return elemSize * int64(len(s))
	case "extend", "update", "union":
		var n int64
		for _, a := range args {
			n += sizeOf(a)
		}
		return n + int64(len(kwargs))*2*elemSize
	}
	return 0
}
