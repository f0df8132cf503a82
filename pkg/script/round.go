package script

import (
	"fmt"
	"math"
	"math/big"

	"go.starlark.net/starlark"
)

// builtinRound is Python 3's round(x, ndigits=None): round half to even on
// the exact binary value of x, so round(2.675, 2) is 2.67 (2.675 is stored
// as 2.67499999...). Without ndigits the result is an int; with ndigits a
// float stays a float and an int stays an int.
func builtinRound(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var x, nd starlark.Value = nil, starlark.None
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "x", &x, "ndigits?", &nd); err != nil {
		return nil, err
	}
	hasN := nd != starlark.None
	var n int
	if hasN {
		if err := starlark.AsInt(nd, &n); err != nil {
			return nil, fmt.Errorf("round: ndigits: %w", err)
		}
	}
	switch x := x.(type) {
	case starlark.Int:
		if !hasN || n >= 0 {
			return x, nil
		}
		if n < -4000 {
			return starlark.MakeInt(0), nil
		}
		p := pow10(-n)
		q := roundHalfEven(x.BigInt(), p)
		return starlark.MakeBigInt(q.Mul(q, p)), nil
	case starlark.Float:
		f := float64(x)
		if !hasN {
			if math.IsNaN(f) || math.IsInf(f, 0) {
				return nil, fmt.Errorf("round: cannot convert %v to integer", f)
			}
			r := new(big.Rat).SetFloat64(f)
			return starlark.MakeBigInt(roundHalfEven(r.Num(), r.Denom())), nil
		}
		if math.IsNaN(f) || math.IsInf(f, 0) || f == 0 || n >= 324 {
			return x, nil // beyond 323 digits no double changes
		}
		if n <= -309 {
			return starlark.Float(math.Copysign(0, f)), nil
		}
		r := new(big.Rat).SetFloat64(f)
		var res *big.Rat
		if n >= 0 {
			p := pow10(n)
			num := new(big.Int).Mul(r.Num(), p)
			q := roundHalfEven(num, r.Denom())
			res = new(big.Rat).SetFrac(q, p)
		} else {
			p := pow10(-n)
			den := new(big.Int).Mul(r.Denom(), p)
			q := roundHalfEven(r.Num(), den)
			res = new(big.Rat).SetInt(q.Mul(q, p))
		}
		out, _ := res.Float64()
		if out == 0 {
			out = math.Copysign(0, f)
		}
		return starlark.Float(out), nil
	}
	return nil, fmt.Errorf("round: got %s, want int or float", x.Type())
}

func pow10(n int) *big.Int {
	return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n)), nil)
}

// roundHalfEven returns a/b rounded to the nearest integer, ties to even; b > 0.
func roundHalfEven(a, b *big.Int) *big.Int {
	q, r := new(big.Int).DivMod(a, b, new(big.Int)) // r >= 0, q = floor(a/b)
	c := new(big.Int).Lsh(r, 1).Cmp(b)
	if c > 0 || (c == 0 && q.Bit(0) == 1) {
		q.Add(q, big.NewInt(1))
	}
	return q
}
