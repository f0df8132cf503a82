package prove

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"

	"github.com/suitegen/suitegen/pkg/script"
)

// PostgreSQL returns a query's rows in no set order unless it asks for one:
// the same table reads in another order after an update, a vacuum or a
// restore. A check whose verdict rests on that order proves nothing twice
// over (it held once and may not the next time), so the solution's checks
// are read again with every such result reversed and must say the same.

// orderBy is a query that asks for an order (anywhere in it: a subquery's
// order is taken as the author's intent, to stay clear of false alarms).
var orderBy = regexp.MustCompile(`(?i)\border\s+by\b`)

// limited is a query that ends in a LIMIT of its own: which rows it keeps
// of more that match rests on the order too.
var limited = regexp.MustCompile(`(?is)^(.*\S)\s+limit\s+(\d+)\s*;?\s*$`)

// unorderedView is a check's view of the world that notes each result of
// two or more rows read with no ORDER BY, and each with no ORDER BY whose
// LIMIT kept some of more rows that match, and, when reverse is set, hands
// it back as the rows in the reverse of the order PostgreSQL returned them
// (the last of them, for a LIMIT).
type unorderedView struct {
	script.WorldView
	reverse bool
	seen    *bool
}

func (v unorderedView) Query(ctx context.Context, sql string, args ...any) ([]script.Row, error) {
	rows, err := v.WorldView.Query(ctx, sql, args...)
	if err != nil || orderBy.MatchString(sql) {
		return rows, err
	}
	if m := limited.FindStringSubmatch(sql); m != nil {
		n, _ := strconv.Atoi(m[2])
		all, err := v.WorldView.Query(ctx, m[1], args...)
		if err != nil || len(all) <= n {
			return rows, nil // the query without its LIMIT says nothing more
		}
		*v.seen = true
		if v.reverse {
			all = slices.Clone(all)
			slices.Reverse(all)
			return all[:n], nil
		}
		return rows, nil
	}
	if len(rows) < 2 {
		return rows, nil
	}
	*v.seen = true
	if v.reverse {
		rows = slices.Clone(rows)
		slices.Reverse(rows)
	}
	return rows, nil
}

func (v unorderedView) Before() script.WorldView {
	b := v.WorldView.Before()
	if b == nil {
		return nil
	}
	return unorderedView{WorldView: b, reverse: v.reverse, seen: v.seen}
}

// rowOrder reads the checks again, every unordered result reversed, when
// reading them the first time (held) met one; a check whose verdict turns
// is refused.
func (pr *proof) rowOrder(ctx context.Context, view script.WorldView, held []CheckResult) ([]Refusal, error) {
	seen := false
	again, err := pr.evalChecks(ctx, unorderedView{WorldView: view, reverse: true, seen: &seen}, pr.results, false)
	if err != nil {
		return nil, err
	}
	var rs []Refusal
	for i, c := range again {
		if i < len(held) && c.Held != held[i].Held {
			rs = append(rs, Refusal{Gate: GateSolvable, Code: CodeCheckRowOrder, SubGoal: c.Name,
				Message: fmt.Sprintf("sub-goal %s holds after the solution with the rows its queries read in the order PostgreSQL returned them, and not with them in another order (%s): a query it rests on has no ORDER BY, and PostgreSQL keeps no order; order the rows, or read them so their order does not matter", c.Name, c.Why)})
		}
	}
	return rs, nil
}
