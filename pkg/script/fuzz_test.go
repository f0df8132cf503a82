package script

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"go.starlark.net/starlark"

	"github.com/suitegen/suitegen/pkg/contract"
)

// FuzzRewriteKeepsMeaning: a program that runs to the end unrewritten gives
// the same result once rewritten into charged calls (given a budget it cannot
// exhaust), so the limits change what a program may cost, never what it
// computes.
func FuzzRewriteKeepsMeaning(f *testing.F) {
	for _, s := range []string{
		"x = [1, 2] + [3]\nx += [4]\nres = x[1:] + x[::-1]",
		"d = {'a': 'b'}\nd['a'] *= 3\nd['a'] += 'c'\nd |= {'z': 1}\nres = [d, d.items(), sorted(d.keys())]",
		"s = 'a,b, c'\nf = s.split\nres = [f(','), s.upper(), getattr(s, 'replace')(',', ';'), '%s-%d' % ('x', 2), '{}{}'.format(1, 2)]",
		"l = [3, 1, 2]\nl[0] -= 1\nl[-1] <<= 3\nres = [l, 7 // 2, 7 % 3, set([1, 2]) | set([3]), set([1, 2]) - set([1]), zip(l, l), enumerate(l)]",
		"res = [json.decode(json.encode({'k': [1, 2.5, None, True]})), str([1, 'x']), repr('y'), list(range(5))[1:4:2], 'abc'[::-1], b'ab'[1:], tuple('ab'.elems())]",
		"def f(n):\n    return n * 'ab'\nres = [f(i) for i in range(4)] + [{k: v for k, v in zip(['a', 'b'], ['c', 'd'])}]",
	} {
		f.Add(s)
	}
	opts := Options{MaxSteps: 100_000, MaxAlloc: 1 << 30, Timeout: time.Minute}
	f.Fuzz(func(t *testing.T, src string) {
		if len(src) > 2000 {
			return
		}
		p, err := Compile(&contract.Contract{}, opts)
		if err != nil {
			t.Fatal(err)
		}
		plain, perr := run(p, src, false)
		if perr != nil {
			return // programs that fail unrewritten prove nothing here
		}
		got, err := run(p, src, true)
		if errors.Is(err, ErrLimit) {
			return // the rewritten program takes a few more steps
		}
		if err != nil {
			t.Fatalf("rewritten program failed: %v\n%s", err, src)
		}
		if got != plain {
			t.Fatalf("rewritten program computed %s, unrewritten %s\n%s", got, plain, src)
		}
	})
}

// run executes src as a file and returns repr(res).
func run(p *Programs, src string, rewritten bool) (string, error) {
	f, err := fileOptions.Parse("fuzz.star", src, 0)
	if err != nil {
		return "", err
	}
	if rewritten {
		if err := rewrite(f, nil); err != nil {
			return "", err
		}
	}
	prog, err := starlark.FileProgram(f, p.predeclared.Has)
	if err != nil {
		return "", err
	}
	th, st, stop := p.newThread(context.Background(), "fuzz")
	defer stop()
	g, err := prog.Init(th, p.predeclared)
	if err != nil {
		return "", st.classify(err)
	}
	res, ok := g["res"]
	if !ok {
		return "", nil
	}
	return res.String(), nil
}

// FuzzJSONString: writeJSONString writes exactly what json.Marshal does.
func FuzzJSONString(f *testing.F) {
	for _, s := range []string{"", "plain", "q\"b\\s/<>&", "\x00\x01\b\f\n\r\t\x1f\x7f", "\u2028\u2029é日本", "\xff\xfe bad \xc3", "\U0001F600"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		var buf bytes.Buffer
		writeJSONString(&buf, s)
		if buf.String() != string(want) {
			t.Fatalf("%q: wrote %s, json.Marshal %s", s, buf.String(), want)
		}
	})
}
