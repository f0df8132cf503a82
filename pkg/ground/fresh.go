package ground

import (
	"slices"
	"sort"
	"strings"

	"github.com/suitegen/suitegen/pkg/contract"
)

// Freshen gives a state-changing call's free arguments values the case's
// records do not already hold: Fill takes free text from the target and
// the caller, so "change the address" would otherwise set the address on
// file, an act that changes nothing (and that a world may refuse for that
// alone). A group of arguments that equal one row's columns is replaced from
// another seed row of the same table (an address stays one address, rotating
// with the case's ordinal); an email becomes a new address of the same
// mailbox. Record keys and enum values are left as filled.
func (g *Graph) Freshen(t *contract.Tool, args map[string]any, b Bound) map[string]any {
	out := make(map[string]any, len(args))
	// In the order the tool declares its arguments, not by their names.
	names := make([]string, 0, len(args))
	for _, n := range t.ParamNames() {
		if _, ok := args[n]; ok {
			names = append(names, n)
		}
	}
	var rest []string
	for n, v := range args {
		out[n] = v
		if !slices.Contains(names, n) {
			rest = append(rest, n)
		}
	}
	sort.Strings(rest)
	names = append(names, rest...)
	type source struct {
		table string
		row   Row
	}
	sources := []source{{b.Table, b.Target}}
	if cl := g.C.Caller; cl != nil && b.Caller != nil && cl.Table != b.Table {
		sources = append(sources, source{cl.Table, b.Caller})
	}
	for _, src := range sources {
		var same []string
		for _, n := range names {
			if _, _, isRef := g.C.RefOf(t.Name, n); isRef || t.Enum(n) != nil {
				continue
			}
			if cur, ok := src.row[n]; ok && cur != nil && Text(cur) == Text(out[n]) {
				same = append(same, n)
			}
		}
		var donated []string
		for _, n := range same {
			if s, ok := out[n].(string); ok && strings.Count(s, "@") == 1 {
				local, domain, _ := strings.Cut(s, "@")
				out[n] = local + ".new@" + domain
				continue
			}
			donated = append(donated, n)
		}
		if donor := g.donor(src.table, src.row, donated, b.Ordinal); donor != nil {
			for _, n := range donated {
				out[n] = donor[n]
			}
		}
	}
	return out
}

// donor is a seed row of table that holds a value in each of cols and
// differs from row in at least one, rotating with k among those that do.
func (g *Graph) donor(table string, row Row, cols []string, k int) Row {
	if len(cols) == 0 {
		return nil
	}
	var fit []Row
	for _, r := range g.Rows(table) {
		differs, complete := false, true
		for _, c := range cols {
			if r[c] == nil {
				complete = false
				break
			}
			differs = differs || Text(r[c]) != Text(row[c])
		}
		if complete && differs {
			fit = append(fit, r)
		}
	}
	if len(fit) == 0 {
		return nil
	}
	if k < 0 {
		k = -k
	}
	return fit[k%len(fit)]
}
