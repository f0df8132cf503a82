package script

import (
	"context"
	"encoding/json"
	"fmt"

	"go.starlark.net/starlark"
)

// DB is what a handler's db runs SQL against (a throwaway copy of a world).
type DB interface {
	Query(ctx context.Context, sql string, args ...any) ([]Row, error)
	Exec(ctx context.Context, sql string, args ...any) (int64, error)
}

// Row is one result row; Columns keeps the query's column order and Values
// are JSON-like (int64, float64, string, bool, nil, []any, map[string]any).
type Row struct {
	Columns []string
	Values  []any
}

// Map returns the row as a map (column order lost).
func (r Row) Map() map[string]any {
	m := make(map[string]any, len(r.Columns))
	for i, c := range r.Columns {
		m[c] = r.Values[i]
	}
	return m
}

// WorldView is what a sub-goal check reads: world.query and world.one read
// the end state, world.before the state after setup (nil: None).
type WorldView interface {
	Query(ctx context.Context, sql string, args ...any) ([]Row, error)
	Before() WorldView
	// Caller is world.caller: the identified caller's row, or nil.
	Caller(ctx context.Context) (any, error)
	Said() []string
}

// Call is one entry of the conversation's call log given to checks.
type Call struct {
	Tool    string
	Args    map[string]any
	OK      bool
	Refused bool
	Result  json.RawMessage // decoded for Starlark as json.decode would
	Error   string
}

// dbValue is a handler's db: query, one and execute against the call's DB.
type dbValue struct{}

func (*dbValue) String() string        { return "<db>" }
func (*dbValue) Type() string          { return "db" }
func (*dbValue) Freeze()               {}
func (*dbValue) Truth() starlark.Bool  { return true }
func (*dbValue) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable type: db") }
func (*dbValue) AttrNames() []string   { return []string{"execute", "one", "query"} }

func (*dbValue) Attr(name string) (starlark.Value, error) {
	switch name {
	case "query", "one":
		return starlark.NewBuiltin("db."+name, func(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			st := stateOf(th)
			if st.db == nil {
				return nil, fmt.Errorf("%s: no database", b.Name())
			}
			return runQuery(th, b, args, kwargs, name == "one", st.db.Query)
		}), nil
	case "execute":
		return starlark.NewBuiltin("db.execute", func(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			st := stateOf(th)
			if st.db == nil {
				return nil, fmt.Errorf("%s: no database", b.Name())
			}
			sql, params, err := sqlArgs(th, b, args, kwargs)
			if err != nil {
				return nil, err
			}
			if err := st.roundTrip(th); err != nil {
				return nil, err
			}
			n, err := st.db.Exec(st.ctx, sql, params...)
			if err != nil {
				return nil, fmt.Errorf("db.execute: %w", err)
			}
			if n > 0 {
				st.wrote = true
			}
			return starlark.MakeInt64(n), nil
		}), nil
	}
	return nil, nil
}

func sqlArgs(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (string, []any, error) {
	if len(kwargs) > 0 {
		return "", nil, fmt.Errorf("%s: unexpected keyword argument %s", b.Name(), kwargs[0][0])
	}
	if len(args) < 1 {
		return "", nil, fmt.Errorf("%s: missing SQL", b.Name())
	}
	sql, ok := args[0].(starlark.String)
	if !ok {
		return "", nil, fmt.Errorf("%s: SQL must be a string, not %s", b.Name(), args[0].Type())
	}
	params := make([]any, len(args)-1)
	for i, a := range args[1:] {
		v, err := fromStarlark(th, a)
		if err != nil {
			return "", nil, fmt.Errorf("%s: parameter $%d: %w", b.Name(), i+1, err)
		}
		params[i] = v
	}
	return string(sql), params, nil
}

type queryFunc func(ctx context.Context, sql string, args ...any) ([]Row, error)

func runQuery(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple, one bool, q queryFunc) (starlark.Value, error) {
	st := stateOf(th)
	sql, params, err := sqlArgs(th, b, args, kwargs)
	if err != nil {
		return nil, err
	}
	if err := st.roundTrip(th); err != nil {
		return nil, err
	}
	rows, err := q(st.ctx, sql, params...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", b.Name(), err)
	}
	if len(rows) > st.p.opts.MaxRows {
		return nil, st.limit(th, fmt.Sprintf("row limit exceeded (%d rows)", st.p.opts.MaxRows))
	}
	if one {
		switch len(rows) {
		case 0:
			return starlark.None, nil
		case 1:
		default:
			return nil, fmt.Errorf("%s: query returned %d rows, want at most one", b.Name(), len(rows))
		}
	}
	// The driver has read the rows already; charging them now stops a
	// handler that keeps querying large results.
	if err := st.charge(th, rowsCost(rows)); err != nil {
		return nil, err
	}
	out := make([]starlark.Value, len(rows))
	for i, r := range rows {
		d := starlark.NewDict(len(r.Columns))
		for j, c := range r.Columns {
			v, err := toStarlark(r.Values[j])
			if err != nil {
				return nil, fmt.Errorf("%s: column %s: %w", b.Name(), c, err)
			}
			if err := d.SetKey(starlark.String(c), v); err != nil {
				return nil, err
			}
		}
		out[i] = d
	}
	if one {
		return out[0], nil
	}
	return starlark.NewList(out), nil
}

// worldValue is a check's world: read-only.
type worldValue struct {
	ctx    context.Context
	view   WorldView
	before starlark.Value // cached world.before
}

func (*worldValue) String() string        { return "<world>" }
func (*worldValue) Type() string          { return "world" }
func (*worldValue) Freeze()               {}
func (*worldValue) Truth() starlark.Bool  { return true }
func (*worldValue) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable type: world") }
func (*worldValue) AttrNames() []string {
	return []string{"before", "caller", "one", "query", "said"}
}

func (w *worldValue) Attr(name string) (starlark.Value, error) {
	switch name {
	case "query", "one":
		return starlark.NewBuiltin("world."+name, func(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			return runQuery(th, b, args, kwargs, name == "one", w.view.Query)
		}), nil
	case "before":
		if w.before == nil {
			// Asked for only when a check reads it, so a lazy view opens nothing otherwise.
			if bv := w.view.Before(); bv != nil {
				w.before = &worldValue{ctx: w.ctx, view: bv}
			} else {
				w.before = starlark.None
			}
		}
		return w.before, nil
	case "caller":
		c, err := w.view.Caller(w.ctx)
		if err != nil {
			return nil, fmt.Errorf("world.caller: %w", err)
		}
		return toStarlark(c)
	case "said":
		said := w.view.Said()
		l := make([]starlark.Value, len(said))
		for i, s := range said {
			l[i] = starlark.String(s)
		}
		return starlark.NewList(l), nil
	}
	return nil, nil
}

// callValue is one call log entry as a dict, its result decoded.
func callValue(th *starlark.Thread, c Call) (starlark.Value, error) {
	args, err := toStarlark(c.Args)
	if err != nil {
		return nil, err
	}
	if c.Args == nil {
		args = starlark.NewDict(0)
	}
	var result starlark.Value = starlark.None
	if len(c.Result) > 0 {
		if result, err = decodeJSON(c.Result); err != nil {
			return nil, fmt.Errorf("result of %s: %w", c.Tool, err)
		}
	}
	var errv starlark.Value = starlark.None
	if c.Error != "" {
		errv = starlark.String(c.Error)
	}
	d := starlark.NewDict(6)
	_ = d.SetKey(starlark.String("tool"), starlark.String(c.Tool))
	_ = d.SetKey(starlark.String("args"), args)
	_ = d.SetKey(starlark.String("ok"), starlark.Bool(c.OK))
	_ = d.SetKey(starlark.String("refused"), starlark.Bool(c.Refused))
	_ = d.SetKey(starlark.String("result"), result)
	_ = d.SetKey(starlark.String("error"), errv)
	return d, nil
}

// rowsCost is what converting rows into Starlark dicts allocates.
func rowsCost(rows []Row) int64 {
	n := int64(listSize)
	for _, r := range rows {
		n = addSize(n, dictSize, mulSize(int64(len(r.Columns)), entrySize))
		for _, v := range r.Values {
			n = addSize(n, goFootprint(v))
		}
	}
	return n
}

// goFootprint bounds the Starlark size of a JSON-like Go value.
func goFootprint(v any) int64 {
	switch x := v.(type) {
	case string:
		return strSize + int64(len(x))
	case []byte:
		return strSize + int64(len(x))
	case json.RawMessage:
		return jsonDecodeCost(string(x))
	case []any:
		n := int64(listSize)
		for _, e := range x {
			n = addSize(n, slotSize, goFootprint(e))
		}
		return n
	case map[string]any:
		n := int64(dictSize)
		for k, e := range x {
			n = addSize(n, entrySize, strSize+int64(len(k)), goFootprint(e))
		}
		return n
	}
	return slotSize
}
