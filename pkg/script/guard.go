package script

import (
	"fmt"

	"go.starlark.net/lib/json"
	"go.starlark.net/lib/math"
	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
	"go.starlark.net/syntax"
)

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
			"decode": starlark.NewBuiltin("json.decode", builtinJSONDecode),
		}},
		"str":         starlark.NewBuiltin("str", builtinStr),
		"repr":        starlark.NewBuiltin("repr", builtinRepr),
		"getattr":     starlark.NewBuiltin("getattr", builtinGetattr),
		fnBin:         starlark.NewBuiltin(fnBin, builtinBin),
		fnAug:         starlark.NewBuiltin(fnAug, builtinAug),
		fnAugIndex:    starlark.NewBuiltin(fnAugIndex, builtinAugIndex),
		fnMethod:      starlark.NewBuiltin(fnMethod, builtinMethod),
		fnAttr:        starlark.NewBuiltin(fnAttr, builtinAttr),
		fnSlice:       starlark.NewBuiltin(fnSlice, builtinSlice),
		fnDictLiteral: starlark.NewBuiltin(fnDictLiteral, builtinDictLiteral),
		fnWant:        starlark.NewBuiltin(fnWant, builtinWant),
	}
	for name, cost := range builtinCosts {
		d[name] = chargedBuiltin(name, cost)
	}
	d.Freeze()
	return d
}

func builtinRefuse(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var msg string
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &msg); err != nil {
		return nil, err
	}
	// The frames say which branch refused (Programs.branchOf); depth 0 is
	// this builtin.
	stack := make([]syntax.Position, 0, th.CallStackDepth())
	for d := 1; d < th.CallStackDepth(); d++ {
		stack = append(stack, th.CallFrame(d).Pos)
	}
	return nil, &Refusal{Message: msg, stack: stack}
}

// builtinCosts are the universal builtins that allocate in proportion to
// their arguments, each with what one call costs. The others (len, min,
// range, type...) allocate a constant.
var builtinCosts = map[string]costFunc{
	"list":  copyCost(slotSize),
	"tuple": copyCost(slotSize),
	"sorted": func(st *callState, _ starlark.Value, args starlark.Tuple, kw []starlark.Tuple) int64 {
		// the copy and, with key=, one key per element
		return addSize(listSize, mulSize(3*slotSize, lenOfFirst(st, args)))
	},
	"reversed": copyCost(slotSize),
	"set": func(st *callState, _ starlark.Value, args starlark.Tuple, _ []starlark.Tuple) int64 {
		return addSize(dictSize, mulSize(entrySize, lenOfFirst(st, args)))
	},
	"dict": func(st *callState, _ starlark.Value, args starlark.Tuple, kw []starlark.Tuple) int64 {
		return addSize(dictSize, mulSize(entrySize, addSize(lenOfFirst(st, args), int64(len(kw)))))
	},
	"enumerate": func(st *callState, _ starlark.Value, args starlark.Tuple, _ []starlark.Tuple) int64 {
		return addSize(listSize, mulSize(slotSize+listSize+2*slotSize, lenOfFirst(st, args)))
	},
	"zip": func(st *callState, _ starlark.Value, args starlark.Tuple, _ []starlark.Tuple) int64 {
		if len(args) == 0 {
			return listSize
		}
		n := int64(-1)
		for _, a := range args {
			if l := lenOf(a, st.remaining()/slotSize); n < 0 || l < n {
				n = l
			}
		}
		return addSize(listSize, mulSize(n, slotSize+listSize+slotSize*int64(len(args))))
	},
	"bytes": func(_ *callState, _ starlark.Value, args starlark.Tuple, _ []starlark.Tuple) int64 {
		if len(args) == 0 {
			return strSize
		}
		switch x := args[0].(type) {
		case starlark.String:
			return strSize + 3*int64(len(x)) // invalid UTF-8 becomes U+FFFD
		case starlark.Bytes:
			return 0 // returned as is
		}
		return addSize(strSize, sizeOf(args[0]))
	},
	"int": func(_ *callState, _ starlark.Value, args starlark.Tuple, _ []starlark.Tuple) int64 {
		if len(args) > 0 {
			if s, ok := args[0].(starlark.String); ok {
				return strSize + int64(len(s))
			}
		}
		return 0
	},
	"fail": func(st *callState, _ starlark.Value, args starlark.Tuple, _ []starlark.Tuple) int64 {
		var n int64
		for _, a := range args {
			n = addSize(n, reprBound(a, st.remaining()))
		}
		return n
	},
	"dir": fixed(listSize + 64*(slotSize+strSize)),
}

func copyCost(per int64) costFunc {
	return func(st *callState, _ starlark.Value, args starlark.Tuple, _ []starlark.Tuple) int64 {
		return addSize(listSize, mulSize(per, lenOfFirst(st, args)))
	}
}

func lenOfFirst(st *callState, args starlark.Tuple) int64 {
	if len(args) == 0 {
		return 0
	}
	return lenOf(args[0], st.remaining()/slotSize)
}

// maxIntDigits is the longest string int() converts: parsing is quadratic
// in its length, and longer strings make integers beyond maxIntBits.
const maxIntDigits = maxIntBits * 30103 / 100000

// chargedBuiltin wraps a universal builtin, charging its cost first.
func chargedBuiltin(name string, cost costFunc) *starlark.Builtin {
	orig := starlark.Universe[name]
	return starlark.NewBuiltin(name, func(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		st := stateOf(th)
		if name == "int" && len(args) > 0 {
			if s, ok := args[0].(starlark.String); ok && len(s) > maxIntDigits+2 {
				return nil, st.limit(th, fmt.Sprintf("allocation limit exceeded (integers are limited to %d bits)", maxIntBits))
			}
		}
		if err := st.charge(th, cost(st, nil, args, kwargs)); err != nil {
			return nil, err
		}
		return starlark.Call(th, orig, args, kwargs)
	})
}

// chargeRepr charges an upper bound of the text that printing vs produces.
func chargeRepr(th *starlark.Thread, vs ...starlark.Value) error {
	st := stateOf(th)
	limit := st.remaining()
	var n int64 = strSize
	for _, v := range vs {
		n = addSize(n, reprBound(v, limit))
	}
	return st.charge(th, n)
}

func builtinStr(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var x starlark.Value
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &x); err != nil {
		return nil, err
	}
	if s, ok := x.(starlark.String); ok {
		return s, nil
	}
	if err := chargeRepr(th, x); err != nil {
		return nil, err
	}
	return starlark.String(x.String()), nil
}

func builtinRepr(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var x starlark.Value
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &x); err != nil {
		return nil, err
	}
	if err := chargeRepr(th, x); err != nil {
		return nil, err
	}
	return starlark.String(x.String()), nil
}

func builtinJSONEncode(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if err := chargeRepr(th, args...); err != nil {
		return nil, err
	}
	return starlark.Call(th, json.Module.Members["encode"], args, kwargs)
}

func builtinJSONDecode(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if len(args) > 0 {
		if s, ok := args[0].(starlark.String); ok {
			if err := stateOf(th).charge(th, jsonDecodeCost(string(s))); err != nil {
				return nil, err
			}
		}
	}
	return starlark.Call(th, json.Module.Members["decode"], args, kwargs)
}

// builtinGetattr is getattr whose method values charge like x.name does.
func builtinGetattr(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	v, err := starlark.Call(th, starlark.Universe["getattr"], args, kwargs)
	if err != nil || len(args) < 2 {
		return v, err
	}
	name, _ := starlark.AsString(args[1])
	return chargedAttr(th, args[0], name, v)
}

// builtinAttr is x.name where the result is not called at once.
func builtinAttr(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if len(args) != 2 || len(kwargs) != 0 {
		return nil, fmt.Errorf("internal: %s wants 2 arguments", b.Name())
	}
	recv := args[0]
	name, _ := starlark.AsString(args[1])
	v, err := attrOf(recv, name)
	if err != nil {
		return nil, err
	}
	return chargedAttr(th, recv, name, v)
}

func attrOf(recv starlark.Value, name string) (starlark.Value, error) {
	ha, ok := recv.(starlark.HasAttrs)
	if !ok {
		return nil, fmt.Errorf("%s has no .%s field or method", recv.Type(), name)
	}
	v, err := ha.Attr(name)
	if err != nil {
		return nil, err
	}
	if v == nil {
		return nil, fmt.Errorf("%s has no .%s field or method", recv.Type(), name)
	}
	return v, nil
}

// chargedAttr turns a method value of a built-in type into one that charges
// when called, and charges what reading a field of a world built.
func chargedAttr(th *starlark.Thread, recv starlark.Value, name string, v starlark.Value) (starlark.Value, error) {
	if fn, ok := v.(*starlark.Builtin); ok && fn.Receiver() != nil {
		return starlark.NewBuiltin(fn.Name(), func(th *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			st := stateOf(th)
			if err := st.charge(th, methodCost(st, recv, name, args, kwargs)); err != nil {
				return nil, err
			}
			return starlark.Call(th, fn, args, kwargs)
		}).BindReceiver(recv), nil
	}
	if _, ok := recv.(*worldValue); ok {
		// world.said and world.caller are built anew on every read.
		st := stateOf(th)
		if err := st.charge(th, footprint(v, st.remaining())); err != nil {
			return nil, err
		}
	}
	return v, nil
}

// builtinMethod is recv.name(args...) with the allocation charged first.
func builtinMethod(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if len(args) < 2 {
		return nil, fmt.Errorf("internal: %s wants a receiver and a name", b.Name())
	}
	recv := args[0]
	name, _ := starlark.AsString(args[1])
	rest := args[2:]
	fn, err := attrOf(recv, name)
	if err != nil {
		return nil, err
	}
	st := stateOf(th)
	if err := st.charge(th, methodCost(st, recv, name, rest, kwargs)); err != nil {
		return nil, err
	}
	if _, ok := recv.(*worldValue); ok {
		if _, isFn := fn.(starlark.Callable); !isFn {
			// world.before(...) and the like: reading the field is what allocates
			if _, err := chargedAttr(th, recv, name, fn); err != nil {
				return nil, err
			}
		}
	}
	return starlark.Call(th, fn, rest, kwargs)
}

// builtinDictLiteral charges a dict built by a literal or a comprehension:
// an empty dict alone takes a hash table bucket.
func builtinDictLiteral(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if len(args) != 1 || len(kwargs) != 0 {
		return nil, fmt.Errorf("internal: %s wants 1 argument", b.Name())
	}
	if err := stateOf(th).charge(th, addSize(dictSize, sizeOf(args[0]))); err != nil {
		return nil, err
	}
	return args[0], nil
}

func opOf(v starlark.Value) (syntax.Token, error) {
	i, ok := v.(starlark.Int)
	if !ok {
		return 0, fmt.Errorf("internal: bad operator %v", v)
	}
	n, _ := i.Int64()
	return syntax.Token(n), nil
}

func isCollection(v starlark.Value) bool {
	switch v.(type) {
	case *starlark.Dict, *starlark.Set:
		return true
	}
	return false
}

// binCost is what x op y allocates, computed before doing it.
func binCost(st *callState, th *starlark.Thread, op syntax.Token, x, y starlark.Value) (int64, error) {
	xi, xInt := x.(starlark.Int)
	yi, yInt := y.(starlark.Int)
	if xInt && yInt {
		_, xs := xi.Int64()
		_, ys := yi.Int64()
		var bitLen int
		switch op {
		case syntax.STAR:
			if xs && ys {
				return 0, nil
			}
			bitLen = xi.BigInt().BitLen() + yi.BigInt().BitLen()
		case syntax.LTLT:
			k, ok := yi.Int64()
			if !ok || k < 0 || k > maxIntBits {
				bitLen = maxIntBits + 1
			} else {
				bitLen = xi.BigInt().BitLen() + int(k)
			}
		default:
			if xs && ys {
				return 0, nil
			}
			return sizeOf(x) + sizeOf(y) + 16, nil
		}
		if bitLen > maxIntBits {
			return 0, st.limit(th, fmt.Sprintf("allocation limit exceeded (integers are limited to %d bits)", maxIntBits))
		}
		return int64(bitLen/8 + 16), nil
	}
	switch op {
	case syntax.PLUS:
		switch x.(type) {
		case starlark.String, starlark.Bytes:
			return addSize(strSize, sizeOf(x), sizeOf(y)), nil
		}
		return addSize(listSize, sizeOf(x), sizeOf(y)), nil
	case syntax.STAR:
		if xInt {
			x, y = y, x // n * seq
		}
		if n, ok := y.(starlark.Int); ok {
			k, ok := n.Int64()
			if !ok {
				return 1 << 62, nil
			}
			return addSize(listSize, mulSize(sizeOf(x), k)), nil
		}
	case syntax.PERCENT:
		if s, ok := x.(starlark.String); ok {
			n := int64(countByte(string(s), '%'))
			return addSize(strSize, int64(len(s)), mulSize(n, reprBound(y, st.remaining()))), nil
		}
	case syntax.PIPE, syntax.AMP, syntax.CIRCUMFLEX, syntax.MINUS:
		if isCollection(x) || isCollection(y) {
			return addSize(dictSize, sizeOf(x), sizeOf(y)), nil
		}
	}
	return 0, nil
}

func countByte(s string, c byte) int {
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			n++
		}
	}
	return n
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
	st := stateOf(th)
	cost, err := binCost(st, th, op, x, y)
	if err != nil {
		return nil, err
	}
	if err := st.charge(th, cost); err != nil {
		return nil, err
	}
	return starlark.Binary(op, x, y)
}

// aug is x op= y: lists extend and dicts update in place, as the
// interpreter does; anything else is x op y.
func aug(th *starlark.Thread, op syntax.Token, x, y starlark.Value) (starlark.Value, error) {
	st := stateOf(th)
	switch {
	case op == syntax.PLUS:
		if l, ok := x.(*starlark.List); ok {
			if it, ok := y.(starlark.Iterable); ok {
				n := lenOf(y, st.remaining()/slotSize)
				if err := st.charge(th, mulSize(2*slotSize, n)); err != nil {
					return nil, err
				}
				elems := make([]starlark.Value, 0, n) // y may be l itself: copy before appending
				for e := range starlark.Elements(it) {
					elems = append(elems, e)
				}
				for _, e := range elems {
					if err := l.Append(e); err != nil {
						return nil, fmt.Errorf("cannot apply += to %w", err)
					}
				}
				return l, nil
			}
		}
	case op == syntax.PIPE:
		if xd, ok := x.(*starlark.Dict); ok {
			if yd, ok := y.(*starlark.Dict); ok {
				if err := st.charge(th, sizeOf(yd)); err != nil {
					return nil, err
				}
				for k, v := range yd.Entries() {
					if err := xd.SetKey(k, v); err != nil {
						return nil, err
					}
				}
				return xd, nil
			}
		}
	}
	cost, err := binCost(st, th, op, x, y)
	if err != nil {
		return nil, err
	}
	if err := st.charge(th, cost); err != nil {
		return nil, err
	}
	return starlark.Binary(op, x, y)
}

func builtinAug(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if len(args) != 3 || len(kwargs) != 0 {
		return nil, fmt.Errorf("internal: %s wants 3 arguments", b.Name())
	}
	op, err := opOf(args[0])
	if err != nil {
		return nil, err
	}
	return aug(th, op, args[1], args[2])
}

// builtinAugIndex is a[i] op= y: a and i are evaluated once.
func builtinAugIndex(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if len(args) != 4 || len(kwargs) != 0 {
		return nil, fmt.Errorf("internal: %s wants 4 arguments", b.Name())
	}
	op, err := opOf(args[0])
	if err != nil {
		return nil, err
	}
	a, i, y := args[1], args[2], args[3]
	x, err := getIndex(a, i)
	if err != nil {
		return nil, err
	}
	z, err := aug(th, op, x, y)
	if err != nil {
		return nil, err
	}
	return starlark.None, setIndex(a, i, z)
}

// getIndex and setIndex are a[i] and a[i] = z as the interpreter does them.
func getIndex(a, i starlark.Value) (starlark.Value, error) {
	switch a := a.(type) {
	case starlark.Mapping:
		z, found, err := a.Get(i)
		if err != nil {
			return nil, err
		}
		if !found {
			return nil, fmt.Errorf("key %v not in %s", i, a.Type())
		}
		return z, nil
	case starlark.Indexable:
		n, err := index(a, i)
		if err != nil {
			return nil, err
		}
		return a.Index(n), nil
	}
	return nil, fmt.Errorf("unhandled index operation %s[%s]", a.Type(), i.Type())
}

func setIndex(a, i, z starlark.Value) error {
	switch a := a.(type) {
	case starlark.HasSetKey:
		return a.SetKey(i, z)
	case starlark.HasSetIndex:
		n, err := index(a, i)
		if err != nil {
			return err
		}
		return a.SetIndex(n, z)
	}
	return fmt.Errorf("%s value does not support item assignment", a.Type())
}

func index(a starlark.Indexable, i starlark.Value) (int, error) {
	n := a.Len()
	k, err := starlark.AsInt32(i)
	if err != nil {
		return 0, fmt.Errorf("%s index: %s", a.Type(), err)
	}
	orig := k
	if k < 0 {
		k += n
	}
	if k < 0 || k >= n {
		return 0, fmt.Errorf("%s index %d out of range [%d:%d]", a.Type(), orig, -n, n-1)
	}
	return k, nil
}

// builtinSlice is x[lo:hi:step] with the copy charged first.
func builtinSlice(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if len(args) != 4 || len(kwargs) != 0 {
		return nil, fmt.Errorf("internal: %s wants 4 arguments", b.Name())
	}
	x, ok := args[0].(starlark.Sliceable)
	if !ok {
		return nil, fmt.Errorf("invalid slice operand %s", args[0].Type())
	}
	start, end, step, err := sliceIndices(x.Len(), args[1], args[2], args[3])
	if err != nil {
		return nil, err
	}
	var count int64
	if step > 0 && end > start {
		count = int64((end - start + step - 1) / step)
	} else if step < 0 && start > end {
		count = int64((start - end - step - 1) / -step)
	}
	var cost int64
	switch x.(type) {
	case starlark.String, starlark.Bytes:
		if step != 1 {
			cost = strSize + count
		}
	case *starlark.List, starlark.Tuple:
		cost = listSize + slotSize*count
	}
	if err := stateOf(th).charge(th, cost); err != nil {
		return nil, err
	}
	return x.Slice(start, end, step), nil
}

// sliceIndices follows the Starlark specification of slicing.
func sliceIndices(n int, lo, hi, stepV starlark.Value) (start, end, step int, err error) {
	step = 1
	if stepV != starlark.None {
		if step, err = starlark.AsInt32(stepV); err != nil {
			return 0, 0, 0, fmt.Errorf("invalid slice step: %s", err)
		}
		if step == 0 {
			return 0, 0, 0, fmt.Errorf("zero is not a valid slice step")
		}
	}
	asIndex := func(v starlark.Value, def int) (int, error) {
		if v == starlark.None {
			return def, nil
		}
		i, err := starlark.AsInt32(v)
		if err != nil {
			return 0, err
		}
		if i < 0 {
			i += n
		}
		return i, nil
	}
	if step > 0 {
		if start, err = asIndex(lo, 0); err != nil {
			return 0, 0, 0, fmt.Errorf("invalid start index: %s", err)
		}
		start = max(0, min(start, n))
		if end, err = asIndex(hi, n); err != nil {
			return 0, 0, 0, fmt.Errorf("invalid end index: %s", err)
		}
		end = max(0, min(end, n))
		if end < start {
			end = start
		}
		return start, end, step, nil
	}
	if start, err = asIndex(lo, n-1); err != nil {
		return 0, 0, 0, fmt.Errorf("invalid start index: %s", err)
	}
	if start >= n {
		start = n - 1
	}
	if end, err = asIndex(hi, -1); err != nil {
		return 0, 0, 0, fmt.Errorf("invalid end index: %s", err)
	}
	if end < -1 {
		end = -1
	}
	if start < end {
		start = end
	}
	return start, end, step, nil
}
