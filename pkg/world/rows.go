package world

import (
	"database/sql/driver"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"math/big"
	"net/netip"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/suitegen/suitegen/pkg/script"
)

// readRows turns query results into JSON-like rows: integers as int64,
// numeric, real and double as float64 (numeric decoded exactly, then
// rounded once), dates as 2006-01-02, timestamps as RFC 3339 in UTC, json and
// jsonb decoded with integral numbers as int64, uuid as text, arrays as []any.
//
// A result larger than the world's MaxResultBytes is an error: a statement
// a copy is given must not fill this process's memory.
func (cp *Copy) readRows(rows pgx.Rows) ([]script.Row, error) {
	out, err := readRows(rows, cp.w.opts.MaxResultBytes)
	if err == nil {
		cp.sawTag(rows.CommandTag())
	}
	return out, err
}

// ErrResultTooLarge is wrapped by errors for a result over MaxResultBytes.
var ErrResultTooLarge = errors.New("result too large")

func readRows(rows pgx.Rows, limit int64) ([]script.Row, error) {
	defer rows.Close()
	if err := rows.Err(); err != nil { // a batch hands over failed results too
		return nil, err
	}
	var size int64
	fds := rows.FieldDescriptions()
	cols := make([]string, len(fds))
	for i, fd := range fds {
		cols[i] = fd.Name
	}
	var out []script.Row
	for rows.Next() {
		raw := rows.RawValues()
		for _, v := range raw {
			size += int64(len(v)) + 8
		}
		if size > limit {
			return nil, fmt.Errorf("%w: more than %d bytes", ErrResultTooLarge, limit)
		}
		vals, err := rows.Values()
		if err != nil {
			return nil, err
		}
		row := script.Row{Columns: cols, Values: make([]any, len(fds))}
		for i, fd := range fds {
			switch fd.DataTypeOID {
			case pgtype.JSONOID, pgtype.JSONBOID:
				if raw[i] == nil {
					continue
				}
				b := raw[i]
				if fd.Format == pgtype.BinaryFormatCode && fd.DataTypeOID == pgtype.JSONBOID && len(b) > 0 {
					b = b[1:] // jsonb binary format: a version byte, then the text
				}
				v, err := script.DecodeJSON(b)
				if err != nil {
					return nil, fmt.Errorf("column %s: %w", fd.Name, err)
				}
				row.Values[i] = v
			default:
				row.Values[i] = normalise(vals[i], fd.DataTypeOID)
			}
		}
		out = append(out, row)
	}
	return out, rows.Err()
}

func normalise(v any, oid uint32) any {
	switch x := v.(type) {
	case nil:
		return nil
	case bool, string, int64, float64:
		return x
	case int8:
		return int64(x)
	case int16:
		return int64(x)
	case int32:
		return int64(x)
	case int:
		return int64(x)
	case uint32:
		return int64(x)
	case float32:
		f, _ := strconv.ParseFloat(strconv.FormatFloat(float64(x), 'g', -1, 32), 64)
		return f
	case pgtype.Numeric:
		return numericValue(x)
	case time.Time:
		if oid == pgtype.DateOID {
			return x.Format("2006-01-02")
		}
		return x.UTC().Format(time.RFC3339Nano)
	case [16]byte:
		return fmt.Sprintf("%x-%x-%x-%x-%x", x[0:4], x[4:6], x[6:8], x[8:10], x[10:16])
	case []byte:
		return `\x` + hex.EncodeToString(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normalise(e, 0)
		}
		return out
	case map[string]any:
		return x
	case netip.Prefix:
		return x.String()
	case netip.Addr:
		return x.String()
	case *big.Int:
		if x.IsInt64() {
			return x.Int64()
		}
		f, _ := new(big.Float).SetInt(x).Float64()
		return f
	case driver.Valuer:
		dv, err := x.Value()
		if err != nil || dv == nil {
			return nil
		}
		if s, ok := dv.(string); ok {
			return s
		}
		return normalise(dv, oid)
	case fmt.Stringer:
		return x.String()
	}
	return fmt.Sprint(v)
}

// numericValue decodes a numeric exactly and rounds it to the nearest
// float64 once (NaN and infinities become their names).
func numericValue(n pgtype.Numeric) any {
	switch {
	case !n.Valid:
		return nil
	case n.NaN:
		return "NaN"
	case n.InfinityModifier == pgtype.Infinity:
		return "Infinity"
	case n.InfinityModifier == pgtype.NegativeInfinity:
		return "-Infinity"
	}
	f, err := strconv.ParseFloat(n.Int.String()+"e"+strconv.Itoa(int(n.Exp)), 64)
	if err != nil && !math.IsInf(f, 0) {
		return n.Int.String() + "e" + strconv.Itoa(int(n.Exp))
	}
	return f
}
