package script

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"sort"
	"strconv"
	"time"
	"unicode/utf8"
	"unsafe"

	"go.starlark.net/starlark"
)

// toStarlark converts a JSON-like Go value into a fresh, mutable Starlark
// value. Map keys are sorted, since Go maps have no order.
func toStarlark(v any) (starlark.Value, error) {
	switch v := v.(type) {
	case nil:
		return starlark.None, nil
	case bool:
		return starlark.Bool(v), nil
	case string:
		return starlark.String(v), nil
	case int:
		return starlark.MakeInt(v), nil
	case int8:
		return starlark.MakeInt64(int64(v)), nil
	case int16:
		return starlark.MakeInt64(int64(v)), nil
	case int32:
		return starlark.MakeInt64(int64(v)), nil
	case int64:
		return starlark.MakeInt64(v), nil
	case uint8:
		return starlark.MakeUint64(uint64(v)), nil
	case uint16:
		return starlark.MakeUint64(uint64(v)), nil
	case uint32:
		return starlark.MakeUint64(uint64(v)), nil
	case uint64:
		return starlark.MakeUint64(v), nil
	case uint:
		return starlark.MakeUint64(uint64(v)), nil
	case float32:
		return starlark.Float(v), nil
	case float64:
		return starlark.Float(v), nil
	case *big.Int:
		return starlark.MakeBigInt(v), nil
	case json.Number:
		if i, err := v.Int64(); err == nil {
			return starlark.MakeInt64(i), nil
		}
		f, err := v.Float64()
		if err != nil {
			return nil, fmt.Errorf("number %q: %w", v, err)
		}
		return starlark.Float(f), nil
	case time.Time:
		return starlark.String(v.UTC().Format(time.RFC3339Nano)), nil
	case []byte:
		return starlark.Bytes(v), nil
	case json.RawMessage:
		return decodeJSON(v)
	case []any:
		elems := make([]starlark.Value, len(v))
		for i, e := range v {
			sv, err := toStarlark(e)
			if err != nil {
				return nil, err
			}
			elems[i] = sv
		}
		return starlark.NewList(elems), nil
	case []string:
		elems := make([]starlark.Value, len(v))
		for i, e := range v {
			elems[i] = starlark.String(e)
		}
		return starlark.NewList(elems), nil
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		d := starlark.NewDict(len(v))
		for _, k := range keys {
			sv, err := toStarlark(v[k])
			if err != nil {
				return nil, err
			}
			_ = d.SetKey(starlark.String(k), sv)
		}
		return d, nil
	case starlark.Value:
		return v, nil
	}
	return nil, fmt.Errorf("cannot convert %T to a Starlark value", v)
}

// fromStarlark converts a Starlark value into a database parameter: scalars
// as themselves, dicts and lists as JSON text (sent as jsonb).
func fromStarlark(th *starlark.Thread, v starlark.Value) (any, error) {
	switch v := v.(type) {
	case starlark.NoneType:
		return nil, nil
	case starlark.Bool:
		return bool(v), nil
	case starlark.String:
		return string(v), nil
	case starlark.Int:
		i, ok := v.Int64()
		if !ok {
			return nil, fmt.Errorf("integer %s out of range", v)
		}
		return i, nil
	case starlark.Float:
		return float64(v), nil
	case starlark.Bytes:
		return []byte(v), nil
	case starlark.IterableMapping, starlark.Iterable:
		st := stateOf(th)
		limit := st.remaining()
		b, err := encodeJSON(v, int(min(limit, math.MaxInt32)))
		if errors.Is(err, ErrLimit) {
			return nil, st.limit(th, fmt.Sprintf("allocation limit exceeded (%d bytes)", st.p.opts.MaxAlloc))
		}
		if err != nil {
			return nil, err
		}
		if err := st.charge(th, int64(len(b))); err != nil {
			return nil, err
		}
		return JSONParam(b), nil
	}
	return nil, fmt.Errorf("cannot send %s to the database", v.Type())
}

// JSONParam is a dict or list parameter: JSON text the database reads as
// jsonb (or json). DB implementations send it as text and let the SQL context
// type it.
type JSONParam string

// DecodeJSON decodes JSON with integral numbers as int64 (as json.decode
// does in Starlark) and other numbers as float64.
func DecodeJSON(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if d.More() {
		return nil, fmt.Errorf("trailing data after JSON value")
	}
	return normaliseNumbers(v), nil
}

func normaliseNumbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			return i
		}
		f, _ := strconv.ParseFloat(string(x), 64)
		return f
	case []any:
		for i := range x {
			x[i] = normaliseNumbers(x[i])
		}
	case map[string]any:
		for k := range x {
			x[k] = normaliseNumbers(x[k])
		}
	}
	return v
}

// decodeJSON decodes JSON into Starlark values keeping object key order, with
// numbers as json.decode reads them.
func decodeJSON(b []byte) (starlark.Value, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	v, err := decodeValue(d)
	if err != nil {
		return nil, err
	}
	if d.More() {
		return nil, fmt.Errorf("trailing data after JSON value")
	}
	return v, nil
}

func decodeValue(d *json.Decoder) (starlark.Value, error) {
	tok, err := d.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '[':
			var elems []starlark.Value
			for d.More() {
				e, err := decodeValue(d)
				if err != nil {
					return nil, err
				}
				elems = append(elems, e)
			}
			if _, err := d.Token(); err != nil {
				return nil, err
			}
			return starlark.NewList(elems), nil
		case '{':
			dict := starlark.NewDict(0)
			for d.More() {
				kt, err := d.Token()
				if err != nil {
					return nil, err
				}
				k, _ := kt.(string)
				v, err := decodeValue(d)
				if err != nil {
					return nil, err
				}
				_ = dict.SetKey(starlark.String(k), v)
			}
			if _, err := d.Token(); err != nil {
				return nil, err
			}
			return dict, nil
		}
	case string:
		return starlark.String(t), nil
	case json.Number:
		s := string(t)
		if i, ok := new(big.Int).SetString(s, 10); ok {
			return starlark.MakeBigInt(i), nil
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, err
		}
		return starlark.Float(f), nil
	case bool:
		return starlark.Bool(t), nil
	case nil:
		return starlark.None, nil
	}
	return nil, fmt.Errorf("unexpected JSON token %v", tok)
}

// encodeJSON encodes a Starlark value as JSON with dict keys in insertion
// order, failing once the output passes limit bytes.
func encodeJSON(v starlark.Value, limit int) ([]byte, error) {
	var buf bytes.Buffer
	var path []unsafe.Pointer
	var emit func(v starlark.Value) error
	emit = func(v starlark.Value) error {
		if buf.Len() > limit {
			return fmt.Errorf("%w: result is more than %d bytes", ErrLimit, limit)
		}
		switch x := v.(type) {
		case starlark.NoneType:
			buf.WriteString("null")
		case starlark.Bool:
			if x {
				buf.WriteString("true")
			} else {
				buf.WriteString("false")
			}
		case starlark.Int:
			buf.WriteString(x.String())
		case starlark.Float:
			f := float64(x)
			if math.IsNaN(f) || math.IsInf(f, 0) {
				return fmt.Errorf("cannot encode non-finite float %v", f)
			}
			buf.WriteString(x.String())
		case starlark.String:
			if buf.Len()+len(x) > limit {
				return fmt.Errorf("%w: result is more than %d bytes", ErrLimit, limit)
			}
			writeJSONString(&buf, string(x))
		case *argsValue:
			return emit(x.dict(true))
		case starlark.IterableMapping:
			if p := pointerOf(v); p != nil {
				for _, q := range path {
					if q == p {
						return fmt.Errorf("cycle in JSON structure")
					}
				}
				path = append(path, p)
				defer func() { path = path[:len(path)-1] }()
			}
			buf.WriteByte('{')
			i := 0
			for k, val := range entries(x) {
				ks, ok := k.(starlark.String)
				if !ok {
					return fmt.Errorf("%s has %s key, want string", x.Type(), k.Type())
				}
				if i > 0 {
					buf.WriteByte(',')
				}
				i++
				writeJSONString(&buf, string(ks))
				buf.WriteByte(':')
				if err := emit(val); err != nil {
					return err
				}
			}
			buf.WriteByte('}')
		case starlark.Iterable:
			if p := pointerOf(v); p != nil {
				for _, q := range path {
					if q == p {
						return fmt.Errorf("cycle in JSON structure")
					}
				}
				path = append(path, p)
				defer func() { path = path[:len(path)-1] }()
			}
			buf.WriteByte('[')
			it := x.Iterate()
			defer it.Done()
			var e starlark.Value
			for i := 0; it.Next(&e); i++ {
				if i > 0 {
					buf.WriteByte(',')
				}
				if err := emit(e); err != nil {
					return err
				}
			}
			buf.WriteByte(']')
		default:
			return fmt.Errorf("cannot encode %s as JSON", v.Type())
		}
		return nil
	}
	if err := emit(v); err != nil {
		return nil, err
	}
	if buf.Len() > limit {
		return nil, fmt.Errorf("%w: result is more than %d bytes", ErrLimit, limit)
	}
	return buf.Bytes(), nil
}

func pointerOf(v starlark.Value) unsafe.Pointer {
	switch x := v.(type) {
	case *starlark.List:
		return unsafe.Pointer(x)
	case *starlark.Dict:
		return unsafe.Pointer(x)
	case *starlark.Set:
		return unsafe.Pointer(x)
	}
	return nil
}

// argsValue is a handler's args: a read-only mapping that records which keys
// the handler read. Iterating or listing it counts as reading every key.
type argsValue struct {
	keys []string // sorted
	vals map[string]starlark.Value
	read map[string]bool
}

var (
	_ starlark.IterableMapping = (*argsValue)(nil)
	_ starlark.HasAttrs        = (*argsValue)(nil)
	_ starlark.Sequence        = (*argsValue)(nil)
)

func newArgs(args map[string]any) (*argsValue, error) {
	a := &argsValue{vals: make(map[string]starlark.Value, len(args)), read: map[string]bool{}}
	for k, v := range args {
		sv, err := toStarlark(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		a.keys = append(a.keys, k)
		a.vals[k] = sv
	}
	sort.Strings(a.keys)
	return a, nil
}

func (a *argsValue) readKeys() []string {
	out := make([]string, 0, len(a.read))
	for k := range a.read {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func (a *argsValue) readAll() {
	for _, k := range a.keys {
		a.read[k] = true
	}
}

func (a *argsValue) String() string        { return a.dict(false).String() }
func (a *argsValue) Type() string          { return "dict" }
func (a *argsValue) Freeze()               {}
func (a *argsValue) Truth() starlark.Bool  { return len(a.keys) > 0 }
func (a *argsValue) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable type: dict") }
func (a *argsValue) Len() int              { return len(a.keys) }

func (a *argsValue) Get(k starlark.Value) (starlark.Value, bool, error) {
	s, ok := k.(starlark.String)
	if !ok {
		return nil, false, nil
	}
	a.read[string(s)] = true
	v, found := a.vals[string(s)]
	return v, found, nil
}

func (a *argsValue) Iterate() starlark.Iterator {
	a.readAll()
	keys := make([]starlark.Value, len(a.keys))
	for i, k := range a.keys {
		keys[i] = starlark.String(k)
	}
	return starlark.Tuple(keys).Iterate()
}

func (a *argsValue) Items() []starlark.Tuple {
	a.readAll()
	out := make([]starlark.Tuple, len(a.keys))
	for i, k := range a.keys {
		out[i] = starlark.Tuple{starlark.String(k), a.vals[k]}
	}
	return out
}

// dict is a mutable copy; markRead says whether copying counts as reading.
func (a *argsValue) dict(markRead bool) *starlark.Dict {
	if markRead {
		a.readAll()
	}
	d := starlark.NewDict(len(a.keys))
	for _, k := range a.keys {
		_ = d.SetKey(starlark.String(k), a.vals[k])
	}
	return d
}

var argsMethods = []string{"get", "items", "keys", "values"}

func (a *argsValue) AttrNames() []string { return argsMethods }

func (a *argsValue) Attr(name string) (starlark.Value, error) {
	switch name {
	case "get":
		return starlark.NewBuiltin("get", func(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			var k, def starlark.Value = nil, starlark.None
			if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &k, &def); err != nil {
				return nil, err
			}
			v, found, err := a.Get(k)
			if err != nil || !found {
				return def, err
			}
			return v, nil
		}), nil
	case "items", "keys", "values":
		return starlark.NewBuiltin(name, func(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 0); err != nil {
				return nil, err
			}
			if err := stateOf(th).charge(th, listSize+mulSize(int64(len(a.keys)), slotSize+listSize+2*slotSize)); err != nil {
				return nil, err
			}
			a.readAll()
			out := make([]starlark.Value, len(a.keys))
			for i, k := range a.keys {
				switch name {
				case "items":
					out[i] = starlark.Tuple{starlark.String(k), a.vals[k]}
				case "keys":
					out[i] = starlark.String(k)
				default:
					out[i] = a.vals[k]
				}
			}
			return starlark.NewList(out), nil
		}), nil
	}
	return nil, nil
}

// writeJSONString writes s as encoding/json writes a string (HTML-safe,
// invalid UTF-8 as U+FFFD, U+2028 and U+2029 escaped), straight into buf:
// json.Marshal would allocate a copy of every string on the way.
func writeJSONString(buf *bytes.Buffer, s string) {
	const hex = "0123456789abcdef"
	buf.WriteByte('"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' && b != '<' && b != '>' && b != '&' {
				i++
				continue
			}
			buf.WriteString(s[start:i])
			switch b {
			case '\\', '"':
				buf.WriteByte('\\')
				buf.WriteByte(b)
			case '\b':
				buf.WriteString(`\b`)
			case '\f':
				buf.WriteString(`\f`)
			case '\n':
				buf.WriteString(`\n`)
			case '\r':
				buf.WriteString(`\r`)
			case '\t':
				buf.WriteString(`\t`)
			default:
				buf.WriteString(`\u00`)
				buf.WriteByte(hex[b>>4])
				buf.WriteByte(hex[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			buf.WriteString(s[start:i])
			buf.WriteString(`\ufffd`)
			i += size
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			buf.WriteString(s[start:i])
			buf.WriteString(`\u202`)
			buf.WriteByte(hex[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	buf.WriteString(s[start:])
	buf.WriteByte('"')
}
