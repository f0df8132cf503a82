package ground

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/scenario"
)

// Grounding is what Discover learnt of a contract's tools.
type Grounding struct {
	Bindings Bindings
	// Unanswered holds the tools no rehearsal answered ok, with the last
	// answer the world gave, for people to read.
	Unanswered map[string]string
	// Wrote holds, for each tool a rehearsal answered ok, whether that
	// call wrote to the world: what the tool does, whatever it is called.
	Wrote map[string]bool
}

// Limits of the search for one tool's bindings.
const (
	discoverCases   = 24  // cases a tool is rehearsed on
	discoverTries   = 200 // rehearsals per tool
	discoverPerCase = 60  // rehearsals per case
	sharedRows      = 16  // rows of a shared table tried
)

// Discover grounds every argument of every tool by behaviour: each argument
// is offered the columns that fit it (by type and format), most alike first
// (by words, and by the tables and columns its handler's SQL names), with
// values from rows a case reaches; a tool is rehearsed alone on a throwaway
// copy with those values until its handler answers ok. What made it answer
// ok is kept: another column, a sibling of the case's row, a shared row (an
// open slot), a fresh value (a member number the world must not already
// hold). An x-ref still comes first. The world never blocks a call for want of
// its requires, so each tool is rehearsed on its own.
func (g *Graph) Discover(ctx context.Context, r Rehearser) (Grounding, error) {
	decl := g.Declared()
	gr := Grounding{Unanswered: map[string]string{}, Wrote: map[string]bool{}}
	for i := range g.C.Tools {
		t := &g.C.Tools[i]
		s := &search{g: g, r: r, t: t}
		bs, last, err := s.run(ctx, decl)
		if err != nil {
			return Grounding{}, fmt.Errorf("ground: discovering %s: %w", t.Name, err)
		}
		if !s.ok {
			gr.Unanswered[t.Name] = last
		} else {
			gr.Wrote[t.Name] = s.wrote
		}
		gr.Bindings = append(gr.Bindings, bs...)
	}
	g.sortBindings(gr.Bindings)
	return gr, nil
}

// search is the rehearsal search for one tool's bindings.
type search struct {
	g *Graph
	r Rehearser
	t *contract.Tool
	// byReach caches the cases of each set of tables the arguments take
	// the case's own rows from.
	byReach map[string][]Bound
	tries   int
	ok      bool
	// used is the value each argument took in the call answered ok, and
	// wrote whether that call wrote to the world.
	used  map[string]any
	wrote bool
	last  string
	// cured is, per argument a refusal quoted, the first other way of it
	// the next refusal did not quote.
	cured map[string]Binding
	// scanned are the tables whose rows together has played.
	scanned map[string]bool
	// computed is the argument whose number the handler computes, when the
	// call answered ok only with the number a refusal wanted (wanted).
	computed string
}

// wanted rehearses again a call refused for a number the handler computed,
// with that number in place of the argument's (the first of params, in
// order, that gave it), and reports which argument it was when the call
// then answers ok.
func (s *search) wanted(ctx context.Context, params []string, args map[string]any, ans Answer) (string, bool, error) {
	if ans.Want == nil {
		return "", false, nil
	}
	for _, p := range params {
		v, has := args[p]
		if !has {
			continue
		}
		nv, ok := SwapWant(CloneValue(v), ans.Want)
		if !ok {
			continue
		}
		again := make(map[string]any, len(args))
		maps.Copy(again, args)
		again[p] = nv
		s.tries++
		res, err := s.r.Rehearse(ctx, nil, []scenario.Call{{Tool: s.t.Name, Args: again}})
		if err != nil || len(res) == 0 {
			return "", false, err
		}
		if res[0].OK {
			s.used, s.wrote = again, res[0].Wrote
			return p, true, nil
		}
		return "", false, nil
	}
	return "", false, nil
}

// CloneValue copies the maps and lists of an argument's value.
func CloneValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = CloneValue(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i := range x {
			out[i] = CloneValue(x[i])
		}
		return out
	}
	return v
}

func (s *search) run(ctx context.Context, decl Bindings) (Bindings, string, error) {
	t := s.t
	req := map[string]bool{}
	for _, p := range t.Required() {
		req[p] = true
	}
	params := t.ParamNames()
	alts := s.alternatives(decl, params)
	base := map[string]Binding{}
	for _, p := range params {
		base[p] = alts[p][0]
	}
	anchor := s.anchor(base)
	won, wonCase, err := s.firstWin(ctx, params, req, alts, base, anchor)
	if err != nil {
		return nil, "", err
	}
	// Arguments that describe one thing (a first name, a last name and a
	// date of birth) are answered ok only when they come from one row: bind
	// them together, table by table, each with a budget of its own.
	for _, jb := range s.joints(params, alts, base) {
		if won != nil {
			break
		}
		s.tries = discoverTries / 2
		if won, wonCase, err = s.firstWin(ctx, params, req, alts, jb, s.anchor(jb)); err != nil {
			return nil, "", err
		}
		if won != nil {
			base, anchor = jb, s.anchor(jb)
		}
	}
	final := base
	if won != nil {
		final = won
		if err := s.writes(ctx, wonCase, params, anchor, final); err != nil {
			return nil, "", err
		}
		if err := s.clockFirst(ctx, wonCase, params, final); err != nil {
			return nil, "", err
		}
		if err := s.clockAlone(ctx, wonCase, params, alts, final); err != nil {
			return nil, "", err
		}
		if err := s.frees(ctx, wonCase, params, final); err != nil {
			return nil, "", err
		}
	}
	s.ok = won != nil
	return s.bindings(params, req, final), s.last, nil
}

// alternatives lists, per argument, the bindings to try, best first: the
// declared one, then the columns that could hold its value (never others
// when the author named one with an x-ref), or a loose binding when no
// column can.
func (s *search) alternatives(decl Bindings, params []string) map[string][]Binding {
	g, t := s.g, s.t
	touched := g.touched(t)
	alts := map[string][]Binding{}
	roots := map[string]string{} // the record each argument names, by its first candidate
	for _, p := range params {
		d, _ := decl.Of(t.Name, p)
		var cands []Binding
		switch d.How {
		case ByXRef, ByName:
			cands = append(cands, d)
		case ByEnum, FreeText, FromRows, FromPattern, FromClock:
			alts[p] = []Binding{d}
			if declined(t, p) && d.How != ByEnum {
				// Names no record, by the author's word, yet its values
				// may still live in a column (a postcode's outward half):
				// the columns it fits come after its schema's and the
				// clock's own values, for the cases those do not answer.
				alts[p] = append(append(alts[p], g.clockDaysOf(t, p)...), s.columnsFor(p, touched)...)
			}
			continue
		}
		var days []Binding
		if d.How != ByXRef {
			days = g.clockDaysOf(t, p)
		}
		if declined(t, p) {
			// The author's word that it names no record: what its schema
			// and the clock give first, the columns it fits after them.
			alts[p] = append(append([]Binding{d}, days...), s.columnsFor(p, touched)...)
			continue
		}
		for _, c := range g.candidates(t, p, touched) {
			if d.Table == c.table && d.Column == c.column {
				continue
			}
			if d.How == ByXRef {
				break // an x-ref is the author's word: other columns are not tried
			}
			cands = append(cands, Binding{Tool: t.Name, Param: p, Table: c.table, Column: c.column, How: ByLikeness, Source: FromCase})
		}
		if len(cands) == 0 {
			alts[p] = append([]Binding{s.loose(p)}, days...)
			continue
		}
		// Another argument of the tool that names the same record (an
		// item to replace and its replacement) asks for a record other
		// than the case's: it is new, whatever it is called.
		root := g.root(cands[0].Table, cands[0].Column)
		again := false
		for _, r := range roots {
			again = again || r == root
		}
		roots[p] = root
		ways := g.ways(p, cands, again)
		// A day no record holds comes right after the best column's own
		// value: a start or move date is the caller's, counted from today.
		alts[p] = append(ways[:1:1], append(days, ways[1:]...)...)
	}
	return alts
}

// Declined reports an argument whose x-ref is false: the author's word that
// it names no record, so a value its schema writes is no guess.
func Declined(t *contract.Tool, p string) bool { return declined(t, p) }

// declined reports an argument whose x-ref is false: the author's word that
// it names no record.
func declined(t *contract.Tool, p string) bool {
	x, has := refSchema(paramSchema(t, p))["x-ref"]
	return has && x == false
}

// clockDaysOf are clockDays for a day or moment argument, none for others.
func (g *Graph) clockDaysOf(t *contract.Tool, p string) []Binding {
	if ps := paramSchema(t, p); isDay(ps) || isMoment(ps) {
		return g.clockDays(t.Name, p)
	}
	return nil
}

// columnsFor are the columns whose values (or their ends) argument p of
// the search's tool fits, each a way to fill it from the case's rows.
func (s *search) columnsFor(p string, touched map[string]bool) []Binding {
	var out []Binding
	for _, c := range s.g.candidates(s.t, p, touched) {
		out = append(out, Binding{Tool: s.t.Name, Param: p, Table: c.table, Column: c.column, How: ByLikeness, Source: FromCase})
	}
	return out
}

// clockOffsets are the days from the world's clock a day argument is tried
// with, first to last: a week ahead (a start, a stop, a move), today, a
// month ahead, yesterday (something that happened).
var clockOffsets = []int{7, 0, 30, -1, 1, 3}

// clockDays are the FromClock ways of a day argument of tool, or of a moment
// argument (format date-time): that day at 10:00 UTC.
func (g *Graph) clockDays(tool, p string) []Binding {
	today := g.C.Clock()
	layout := "2006-01-02"
	if t := g.C.Tool(tool); t != nil && isMoment(paramSchema(t, p)) {
		y, m, d := today.Date()
		today, layout = time.Date(y, m, d, 10, 0, 0, 0, time.UTC), time.RFC3339
	}
	out := make([]Binding, len(clockOffsets))
	for i, n := range clockOffsets {
		out[i] = Binding{Tool: tool, Param: p, How: FromClock, Picks: []any{today.AddDate(0, 0, n).Format(layout)}}
	}
	return out
}

// root is the column a key column stands for: the column its chain of
// foreign keys ends at (order_items.item_id names a variants.item_id).
func (g *Graph) root(table, column string) string {
	for range 8 { // a chain of foreign keys is short; a cycle must not spin
		fk, ok := g.fkOf(table, column)
		if !ok {
			break
		}
		table, column = fk.RefTable, fk.RefColumn
	}
	return table + "." + column
}

// firstWin plays cases until an assignment of bindings is answered ok:
// first filling the required arguments only, then, if that never was
// enough, the optional ones too (which turns their Fill on in alts and
// base). It returns nil when no case won.
func (s *search) firstWin(ctx context.Context, params []string, req map[string]bool, alts map[string][]Binding, base map[string]Binding, anchor string) (map[string]Binding, Bound, error) {
	for round := 0; round < 2; round++ {
		if round == 1 && !fillOptional(params, req, alts, base) {
			break
		}
		// Every case as it stands first: a case whose own record the
		// handler refuses (an adult has no guardian on file) must not spend
		// the search on its other arguments while the next case would answer.
		for _, b := range s.casesOf(base) {
			if s.tries >= discoverTries {
				break
			}
			b.Variant = 0
			won, _, _, err := s.asItStands(ctx, b, params, anchor, base)
			if err != nil || won != nil {
				return won, b, err
			}
		}
		for _, b := range s.casesOf(base) {
			if s.tries >= discoverTries {
				break
			}
			a, err := s.onCase(ctx, b, params, anchor, alts, base)
			if err != nil {
				return nil, Bound{}, err
			}
			if a != nil {
				return a, b, nil
			}
		}
	}
	return s.rarer(ctx, params, anchor, base)
}

// rarerRows is how many rows of its table a tool no case answered ok is
// still rehearsed on, each once as it stands.
const rarerRows = 160

// rarer rehearses a tool no case of the sample answered ok on the other rows
// of the cases' table, each once with the arguments as they stand: a tool
// may take only rows in a state few hold (a trip completed in the last
// week and not yet rated), which a sample spread over the table can miss.
// Its budget is its own, so only a tool that never answers pays it.
func (s *search) rarer(ctx context.Context, params []string, anchor string, base map[string]Binding) (map[string]Binding, Bound, error) {
	cases := s.casesOf(base)
	if len(cases) == 0 || cases[0].Target == nil {
		return nil, Bound{}, nil
	}
	table := cases[0].Table
	pk := s.g.PK(table)
	if pk == "" {
		return nil, Bound{}, nil
	}
	seen := map[string]bool{}
	for _, b := range cases {
		seen[Text(b.Target[pk])] = true
	}
	tries := s.tries
	defer func() { s.tries = tries }()
	// A way the world stopped quoting in its refusal (a new certificate
	// where the case's was taken) stays: the other rows are played with it.
	base = s.withCured(base)
	// A row with several owners (a parcel's sender and recipient) is
	// played for each: some acts are one owner's alone.
	roles := []string{""}
	if rs := s.g.OwnerRoles(table); len(rs) > 1 {
		roles = append(roles, rs[1:]...)
	}
	for i, r := range s.g.Sample(table, rarerRows) {
		if seen[Text(r[pk])] {
			continue
		}
		for _, role := range roles {
			b := s.g.bindAs(table, r, role)
			b.Ordinal, b.Person = i, probePerson()
			ok, _, _, err := s.try(ctx, b, params, base)
			if err != nil {
				return nil, Bound{}, err
			}
			if ok {
				return base, b, nil
			}
		}
	}
	return nil, Bound{}, nil
}

// jointTables is how many tables the joint search tries.
const jointTables = 3

// joints are the assignments that take several arguments from one row: for
// each table where two or more arguments have a column, those arguments bound
// to it (the case's own row), the others as in base; tables where most
// arguments have a column first.
func (s *search) joints(params []string, alts map[string][]Binding, base map[string]Binding) []map[string]Binding {
	var tables []string
	cover := map[string]map[string]Binding{}
	for _, p := range params {
		if h := base[p].How; h == ByXRef || h == ByName {
			continue // the author's word, or the naming rules': kept
		}
		for _, a := range alts[p] {
			if a.Table == "" || a.Source != FromCase || a.How == Fresh {
				continue
			}
			if cover[a.Table] == nil {
				cover[a.Table] = map[string]Binding{}
				tables = append(tables, a.Table)
			}
			if _, has := cover[a.Table][p]; !has {
				cover[a.Table][p] = a
			}
		}
	}
	sort.SliceStable(tables, func(i, j int) bool { return len(cover[tables[i]]) > len(cover[tables[j]]) })
	var out []map[string]Binding
	for _, t := range tables {
		if len(cover[t]) < 2 || len(out) == jointTables {
			continue
		}
		jb := make(map[string]Binding, len(base))
		changed := false
		for _, p := range params {
			jb[p] = base[p]
			if a, ok := cover[t][p]; ok {
				changed = changed || base[p].Table != a.Table || base[p].Column != a.Column || base[p].Source != a.Source
				jb[p] = a
			}
		}
		if changed {
			out = append(out, jb)
		}
	}
	return out
}

// fillOptional turns Fill on for every optional argument a column or an
// enum can fill, and reports whether there was one.
func fillOptional(params []string, req map[string]bool, alts map[string][]Binding, base map[string]Binding) bool {
	some := false
	for _, p := range params {
		if req[p] {
			continue
		}
		for i := range alts[p] {
			if alts[p][i].Table != "" || alts[p][i].How == ByEnum {
				alts[p][i].Fill = true
				some = true
			}
		}
		base[p] = alts[p][0]
	}
	return some
}

// bindings are the tool's final bindings: confirmed where a won call
// filled them, Unbound for a required argument nothing grounds when no
// call won.
func (s *search) bindings(params []string, req map[string]bool, final map[string]Binding) Bindings {
	var out Bindings
	for _, p := range params {
		b := final[p]
		b.Tool, b.Param = s.t.Name, p
		if s.ok {
			_, filled := s.used[p]
			b.Confirmed = filled && b.How != FreeText && b.How != Unbound && b.How != ByEnum
			b.Computed = p == s.computed
		} else if req[p] && b.Table == "" && b.How != ByEnum && b.How != FreeText && b.How != FromRows && (b.How != FromPattern || !declined(s.t, p)) {
			// A value written from the schema of an argument its author
			// says names no record (x-ref: false) is what the author
			// asked for, whatever else kept the tool from answering.
			b.How = Unbound
		}
		if b.How != Fresh && b.Table == "" {
			b.Source = ""
		}
		if b.Source != FromShared && b.How != FromClock {
			b.Picks = nil
		}
		out = append(out, b)
	}
	return out
}

// ways lists, for each candidate column of an argument, the ways a case may
// take a value of it: its own row, a sibling of it, a shared row, a fresh
// value (for a column that must be unique). An argument whose name says it
// is new ("new_phone"), or names the record an earlier argument of its tool
// names (again), tries the ways that differ from the case first.
func (g *Graph) ways(p string, cands []Binding, again bool) []Binding {
	var all []Binding
	for _, c := range cands {
		own := c
		sib := c
		sib.Source = FromSibling
		shared := c
		shared.Source = FromShared
		fresh := c
		fresh.How, fresh.Source = Fresh, ""
		canFresh := g.takesFresh(c.Table, c.Column)
		// A sibling is another record: only a key has one.
		record := g.C.Table(c.Table).IsUnique(c.Column)
		ways := []Binding{own}
		if record {
			ways = append(ways, sib)
		}
		if canFresh {
			ways = append(ways, fresh)
		}
		ways = append(ways, shared)
		if isNew(p) || again && record {
			// A new record is another one of the world's (another variant);
			// a new value is one no one has yet (an email to change to).
			switch {
			case g.PK(c.Table) == c.Column:
				ways = []Binding{sib, shared, own}
			case canFresh:
				ways = []Binding{fresh, shared, own}
				if record {
					ways = []Binding{fresh, sib, shared, own}
				}
			default:
				ways = []Binding{shared, own}
			}
		}
		all = append(all, ways...)
	}
	return all
}

// try rehearses the tool filled by assign on a case. It returns the
// assignment's answer and the arguments to blame when it was refused: those
// the handler read (a handler reads as it checks, so what it never read is
// not why it refused), all passed ones when the params schema refused.
func (s *search) try(ctx context.Context, b Bound, params []string, assign map[string]Binding) (ok bool, blame []string, quoted int, err error) {
	bs := make(Bindings, 0, len(assign))
	for _, p := range params {
		a := assign[p]
		if a.Source == FromShared && len(a.Picks) == 0 {
			if v, ok := s.sharedRow(a, 0); ok {
				a.Picks = []any{v}
				assign[p] = a
			}
		}
		bs = append(bs, a)
	}
	args, filled := s.g.Fill(s.t, b, bs)
	if !filled {
		for _, p := range params {
			if _, has := args[p]; !has {
				blame = append(blame, p)
			}
		}
		return false, blame, 0, nil
	}
	s.tries++
	res, err := s.r.Rehearse(ctx, nil, []scenario.Call{{Tool: s.t.Name, Args: args}})
	if err != nil || len(res) == 0 {
		return false, nil, 0, err
	}
	ans := res[0]
	if ans.OK {
		s.used, s.wrote, s.computed = args, ans.Wrote, ""
		return true, nil, 0, nil
	}
	if p, ok, err := s.wanted(ctx, params, args, ans); err != nil || ok {
		if ok {
			s.computed = p
		}
		return ok, nil, 0, err
	}
	s.last = ans.Error
	var rest []string
	for _, p := range params {
		v, passed := args[p]
		switch {
		case !passed || !ans.Invalid && !contains(ans.Read, p):
		case quotes(ans.Error, v):
			blame = append(blame, p)
		default:
			rest = append(rest, p)
		}
	}
	return false, append(blame, rest...), len(blame), nil
}

// quotes reports whether a refusal quotes an argument's value: the world
// says what it refuses ("service cannot start on a past date (2025-07-18)").
// Short values are left out; they match by chance.
func quotes(msg string, v any) bool {
	t := Text(v)
	return len(t) >= 4 && strings.Contains(msg, t)
}

// options are the other ways of an argument on a case: every way but the
// current one, a shared way as one option per row (none when the case
// reaches rows of that table: a shared row is for records no case owns).
func (s *search) options(b Bound, p string, alts map[string][]Binding, cur Binding) []Binding {
	var out []Binding
	for _, a := range alts[p] {
		if a.Source == FromShared {
			if len(b.Rows[a.Table]) > 0 && s.g.C.Table(a.Table).IsUnique(a.Column) {
				continue // a record the case has its own of
			}
			for i := 0; ; i++ {
				v, ok := s.sharedRow(a, i)
				if !ok {
					break
				}
				o := a
				o.Picks = []any{v}
				out = append(out, o)
			}
			continue
		}
		if sameWay(a, cur) {
			continue
		}
		out = append(out, a)
	}
	return out
}

// sameWay reports whether two bindings of an argument take its value alike.
func sameWay(a, b Binding) bool {
	return a.Table == b.Table && a.Column == b.Column && a.How == b.How && a.Source == b.Source && slices.Equal(a.Picks, b.Picks)
}

// onCase searches one case: the assignment as it stands, under each of up to
// three row choices; then, for each argument to blame (the case's own record
// is never blamed: another case is tried instead), each of its other ways
// alone; then pairs of them. It returns the assignment the handler answered
// ok, or nil.
func (s *search) onCase(ctx context.Context, b Bound, params []string, anchor string, alts map[string][]Binding, base map[string]Binding) (map[string]Binding, error) {
	budget := s.tries + discoverPerCase
	won, suspects, nq, err := s.asItStands(ctx, b, params, anchor, base)
	if err != nil || won != nil || len(suspects) == 0 {
		return won, err // no suspect: the case's own record is refused
	}
	// Then, under its first row choice, each other way of one argument to
	// blame, then of two.
	b.Variant = 0
	return s.otherWays(ctx, b, params, anchor, suspects, nq, alts, base, budget)
}

// asItStands plays the case as it stands, under each of its row choices,
// and each of a few ordinals when an argument's value is one the ordinal
// chooses (a sibling, a shared row, an enum value). It returns the
// bindings when a call won, else the arguments the refusals blamed, the
// first nq of them quoted by a refusal.
func (s *search) asItStands(ctx context.Context, b Bound, params []string, anchor string, base map[string]Binding) (won map[string]Binding, suspects []string, nq int, err error) {
	variants := 1
	for _, a := range base {
		if a.Table != "" && a.Source == FromCase && a.How != Fresh && a.Table != b.Table {
			variants = max(variants, len(b.Rows[a.Table]))
		}
	}
	variants = min(variants, 3)
	ordinals := 1
	for _, a := range base {
		if a.Source == FromSibling || a.Source == FromShared || a.How == ByEnum {
			ordinals = 3
		}
	}
	ordinal := b.Ordinal
	for v := 0; v < variants; v++ {
		for o := 0; o < ordinals; o++ {
			b.Variant, b.Ordinal = v, ordinal+o
			ok, blame, quoted, err := s.try(ctx, b, params, base)
			if err != nil || ok {
				return nilUnless(ok, base), nil, 0, err
			}
			// What the refusal quotes is tried first (a date in the past,
			// an address not served).
			for i, p := range blame {
				if p == anchor || contains(suspects, p) {
					continue
				}
				if i < quoted {
					suspects = slices.Insert(suspects, nq, p)
					nq++
				} else {
					suspects = append(suspects, p)
				}
			}
		}
	}
	return nil, suspects, nq, nil
}

// otherWays tries each other way of binding one suspect argument, then the
// rows of a record several of them name together, then pairs of them, until
// a call wins or the case's budget is spent. The first nq suspects were
// quoted by a refusal: the first way of one of them the next refusal no
// longer quotes is kept as cured, and the search goes on from it with what
// that refusal blames.
func (s *search) otherWays(ctx context.Context, b Bound, params []string, anchor string, suspects []string, nq int, alts map[string][]Binding, base map[string]Binding, budget int) (map[string]Binding, error) {
	// A way that cured a quoted refusal (a day after today, a certificate
	// not yet used) is where the rest starts.
	if cured := s.withCured(base); !maps.EqualFunc(cured, base, sameWay) {
		base = cured
		if ok, _, _, err := s.try(ctx, b, params, base); err != nil || ok {
			return nilUnless(ok, base), err
		}
	}
	opts := map[string][]Binding{}
	for _, p := range suspects {
		opts[p] = s.options(b, p, alts, base[p])
	}
	spent := func() bool { return s.tries >= budget || s.tries >= discoverTries }
singles:
	for i, p := range suspects {
		for _, o := range opts[p] {
			if spent() {
				break singles
			}
			next := with(base, p, o)
			ok, blame, quoted, err := s.try(ctx, b, params, next)
			if err != nil || ok {
				return nilUnless(ok, next), err
			}
			if _, done := s.cured[p]; i < nq && !done && len(blame) > 0 && !contains(blame[:quoted], p) {
				// The refusal moved on: what it blames now is searched
				// from here.
				s.cure(p, o)
				var again []string
				nq := 0
				for j, q := range blame {
					if q == anchor {
						continue
					}
					again = append(again, q)
					if j < quoted {
						nq++
					}
				}
				return s.otherWays(ctx, b, params, anchor, again, nq, alts, next, budget)
			}
		}
	}
	// Arguments that name one record no case owns together (the street,
	// unit and ZIP of the address to move to) match only when they come
	// from one row: no change of one of them alone can answer.
	if won, err := s.together(ctx, b, params, suspects[:nq], alts, base); err != nil || won != nil {
		return won, err
	}
	for i, p := range suspects {
		for _, q := range suspects[i+1:] {
			for _, o := range first(opts[p], 4) {
				for _, o2 := range first(opts[q], 4) {
					if spent() {
						return nil, nil
					}
					next := with(with(base, p, o), q, o2)
					if ok, _, _, err := s.try(ctx, b, params, next); err != nil || ok {
						return nilUnless(ok, next), err
					}
				}
			}
		}
	}
	return nil, nil
}

// cure keeps way as the one that cured p's quoted refusal.
func (s *search) cure(p string, way Binding) {
	if s.cured == nil {
		s.cured = map[string]Binding{}
	}
	s.cured[p] = way
}

// withCured is base with every cured way in place.
func (s *search) withCured(base map[string]Binding) map[string]Binding {
	if len(s.cured) == 0 {
		return base
	}
	out := maps.Clone(base)
	maps.Copy(out, s.cured)
	return out
}

// together plays, once per table in a search, the rows of a table no case
// owns for the arguments that name one record of it together
// (sharedTogether), when a refusal quoted one of them: up to rarerRows
// rows, on a budget of its own, until one answers ok (a vacant address
// among occupied ones).
func (s *search) together(ctx context.Context, b Bound, params, quoted []string, alts map[string][]Binding, base map[string]Binding) (map[string]Binding, error) {
	tries := s.tries
	defer func() { s.tries = tries }()
	groups := s.sharedTogether(params, quoted, alts, base)
	for _, t := range slices.Sorted(maps.Keys(groups)) { // one order, so one plan
		members := groups[t]
		if s.scanned[t] {
			continue
		}
		if s.scanned == nil {
			s.scanned = map[string]bool{}
		}
		s.scanned[t] = true
		for _, next := range s.jointRows(t, members, params, base) {
			if ok, _, _, err := s.try(ctx, b, params, next); err != nil || ok {
				return nilUnless(ok, next), err
			}
		}
	}
	return nil, nil
}

// sharedTogether are, per table, the arguments bound to a column of it
// (not by the author's word or the naming rules) that have a shared way
// on it, where two of them are, one of them among suspects.
func (s *search) sharedTogether(params, suspects []string, alts map[string][]Binding, base map[string]Binding) map[string]map[string]Binding {
	ways := map[string]map[string]Binding{}
	for _, p := range params {
		if h := base[p].How; h == ByXRef || h == ByName {
			continue
		}
		for _, a := range alts[p] {
			if a.Source != FromShared || a.Table == "" || a.Table != base[p].Table {
				continue
			}
			if ways[a.Table] == nil {
				ways[a.Table] = map[string]Binding{}
			}
			ways[a.Table][p] = a
			break
		}
	}
	for t, w := range ways {
		if len(w) < 2 || !slices.ContainsFunc(suspects, func(p string) bool { _, in := w[p]; return in }) {
			delete(ways, t)
		}
	}
	return ways
}

// jointRows are the assignments that take members' values from one row of
// table each, up to rarerRows distinct rows.
func (s *search) jointRows(table string, members map[string]Binding, params []string, base map[string]Binding) []map[string]Binding {
	var out []map[string]Binding
	seen := map[string]bool{}
	req := s.t.Required()
	for _, r := range s.g.Sample(table, rarerRows) {
		next, key := maps.Clone(base), ""
		for _, p := range params {
			a, in := members[p]
			if !in || r[a.Column] == nil {
				continue
			}
			// An optional part the row has none of (no unit) is left out.
			a.Fill = Text(r[a.Column]) != "" || slices.Contains(req, p)
			a.Picks = []any{r[a.Column]}
			next[p], key = a, key+"\x00"+Text(r[a.Column])
		}
		if !seen[key] {
			seen[key] = true
			out = append(out, next)
		}
	}
	return out
}

// writes checks, on the case that answered ok, which arguments bound to the
// case's own unique values are values to write rather than records to look
// up: one that still answers ok with a fresh value (an email to change to)
// takes fresh values from then on.
func (s *search) writes(ctx context.Context, b Bound, params []string, anchor string, assign map[string]Binding) error {
	used := s.used
	for _, p := range params {
		a := assign[p]
		if p == anchor || a.Source != FromCase || a.How == Fresh || a.Table == "" || !s.g.takesFresh(a.Table, a.Column) {
			continue
		}
		if _, passed := used[p]; !passed {
			continue
		}
		f := a
		f.How, f.Source = Fresh, ""
		ok, _, _, err := s.try(ctx, b, params, with(assign, p, f))
		if err != nil {
			return err
		}
		if _, sent := s.used[p]; ok && (sent || !s.wrote) {
			// An act that answers ok with an optional record argument
			// left out (no fresh value was sent) tells nothing of what the
			// argument takes: it stays the record it names, whose act it
			// is (a caregiver's id on a patient's refill). A read's
			// optional filter is the caller's to leave out.
			own := true
			if s.g.keyColumn(a.Table, a.Column) {
				var err error
				if own, err = s.writesTable(ctx, a.Table); err != nil {
					return err
				}
			}
			if own {
				assign[p] = f
			}
		}
	}
	s.used = used
	return nil
}

// writesRehearser is a Rehearser that also returns statements writing
// what the calls wrote (probe's).
type writesRehearser interface {
	RehearseWrites(ctx context.Context, setup []scenario.Statement, calls []scenario.Call) ([]Answer, []scenario.Statement, error)
}

// keyColumn reports whether col is (part of) table's primary key: its
// values name the table's records.
func (g *Graph) keyColumn(table, col string) bool {
	t := g.C.Table(table)
	return t != nil && slices.Contains(t.PrimaryKey, col)
}

// writesTable reports whether the call that last answered ok (s.used)
// writes a row of table, or may. A new value of a table's key is one to
// write when the act writes that table (a member registered); an act that
// only copies it into another table's rows (a booking's origin airport)
// names a record, which a handler that never looks it up takes all the
// same. (A new phone number the act writes onto a parcel is not a key: it
// stays fresh.) A read, or a rehearser that cannot tell what was written,
// keeps the value fresh.
func (s *search) writesTable(ctx context.Context, table string) (bool, error) {
	wr, ok := s.r.(writesRehearser)
	if !ok || !s.wrote {
		return true, nil
	}
	s.tries++
	ans, writes, err := wr.RehearseWrites(ctx, nil, []scenario.Call{{Tool: s.t.Name, Args: s.used}})
	if err != nil || len(ans) == 0 || !ans[0].OK || len(writes) == 0 {
		return true, err
	}
	for _, st := range writes {
		if WrittenTable(st.SQL) == table {
			return true, nil
		}
	}
	return false, nil
}

// WrittenTable is the table an INSERT, UPDATE or DELETE statement writes,
// "" for any other.
func WrittenTable(sql string) string {
	f := strings.Fields(sql)
	switch {
	case len(f) >= 3 && (strings.EqualFold(f[0], "INSERT") || strings.EqualFold(f[0], "DELETE")) &&
		(strings.EqualFold(f[1], "INTO") || strings.EqualFold(f[1], "FROM")):
		return strings.Trim(f[2], `"`)
	case len(f) >= 2 && strings.EqualFold(f[0], "UPDATE"):
		return strings.Trim(f[1], `"`)
	}
	return ""
}

// frees checks, on the case an act answered ok, each argument taken from a
// column only for its name's likeness, in a table no other argument names
// nor one a foreign key ties to theirs: when the act still answers ok, and
// writes, with a value of the argument's own (free text, or one its
// schema's pattern or bounds give), the value is the caller's to choose (a
// credit's amount, a shipment line's label), not a copy of that column.
func (s *search) frees(ctx context.Context, b Bound, params []string, assign map[string]Binding) error {
	if !s.wrote {
		return nil // a read's filter is the record it finds, whatever it answers
	}
	used, wrote := s.used, s.wrote
	defer func() { s.used, s.wrote = used, wrote }()
	for _, p := range params {
		a := assign[p]
		if a.How != ByLikeness || a.Table == "" {
			continue
		}
		if _, passed := used[p]; !passed || s.tiedToOthers(p, a.Table, assign) {
			continue
		}
		l := s.loose(p)
		if l.How != FreeText && l.How != FromPattern {
			continue
		}
		ok, _, _, err := s.try(ctx, b, params, with(assign, p, l))
		if err != nil {
			return err
		}
		if ok && s.wrote {
			assign[p] = l
		}
	}
	return nil
}

// tiedToOthers reports whether table is one another argument of the call is
// bound to, or is tied to one of those by a foreign key either way.
func (s *search) tiedToOthers(p, table string, assign map[string]Binding) bool {
	refers := func(child, parent string) bool {
		return slices.ContainsFunc(s.g.fks[child], func(fk FK) bool { return fk.RefTable == parent })
	}
	for q, a := range assign {
		if q != p && a.Table != "" && (a.Table == table || refers(table, a.Table) || refers(a.Table, table)) {
			return true
		}
	}
	return false
}

// clockFirst checks, on the case that answered ok, whether a day the call
// took from a column (not by the author's word) also answers ok as a day
// counted from the world's clock: such a day is the caller's (a start or
// move date), which the rows' own days, mostly past, are not. The first
// clock day that does is kept.
func (s *search) clockFirst(ctx context.Context, b Bound, params []string, assign map[string]Binding) error {
	used := s.used
	defer func() { s.used = used }()
	for _, p := range params {
		a := assign[p]
		v, passed := used[p]
		if day, ok := dayOf(Text(v)); !passed || a.Table == "" || a.How == ByXRef || !ok || day != Text(v) {
			continue // not a day a column gave
		}
		for _, clock := range s.g.clockDays(s.t.Name, p) {
			ok, _, _, err := s.try(ctx, b, params, with(assign, p, clock))
			if err != nil {
				return err
			}
			if ok {
				assign[p] = clock
				break
			}
		}
	}
	return nil
}

// holdsDays reports whether a column holds days or moments.
func (g *Graph) holdsDays(table, col string) bool {
	tb := g.C.Table(table)
	if tb == nil || tb.Column(col) == nil {
		return false
	}
	k := kind(tb.Column(col).Type)
	return k == "date" || k == "timestamp"
}

// clockAlone undoes a day from the clock that the handler took only on the
// case it won on: a date the caller states as a fact (their last trip's),
// which that one case's record happened to hold. When the clock day is
// refused on each other case tried, the column of days that answers ok on
// most of the cases (on any of the rows each reaches) is kept instead.
func (s *search) clockAlone(ctx context.Context, won Bound, params []string, alts map[string][]Binding, assign map[string]Binding) error {
	used, wrote := s.used, s.wrote
	defer func() { s.used, s.wrote = used, wrote }()
	for _, p := range params {
		if assign[p].How != FromClock {
			continue
		}
		var cols []Binding
		for _, a := range alts[p] {
			if a.Table != "" && a.Source == FromCase && a.How != Fresh && s.g.holdsDays(a.Table, a.Column) {
				cols = append(cols, a)
			}
		}
		if len(cols) == 0 {
			continue
		}
		cases, err := s.onlyOn(ctx, won, params, assign)
		if err != nil {
			return err
		}
		if cases == nil {
			continue // the day holds beyond its case: the caller's
		}
		// Ties go to a column the handler's own file names (completed_at,
		// where a trip's request falls on the same day as its end).
		touched := identWords(s.g.C.Sources[s.t.Handler])
		best, most := Binding{}, 0
		for _, col := range cols {
			n, err := s.held(ctx, cases, params, with(assign, p, col))
			if err != nil {
				return err
			}
			if n > most || n == most && n > 0 && touched[strings.ToLower(col.Column)] && !touched[strings.ToLower(best.Column)] {
				best, most = col, n
			}
		}
		if most > 0 {
			assign[p] = best
		}
	}
	return nil
}

// onlyOn returns won and up to three other cases when assign is refused on
// each of the others, nil otherwise.
func (s *search) onlyOn(ctx context.Context, won Bound, params []string, assign map[string]Binding) ([]Bound, error) {
	out := []Bound{won}
	for _, b := range s.casesOf(assign) {
		if len(out) == 4 {
			break
		}
		if b.Target != nil && won.Target != nil && rowKey(s.g, b.Table, b.Target) == rowKey(s.g, won.Table, won.Target) {
			continue
		}
		out = append(out, b)
		ok, _, _, err := s.try(ctx, b, params, assign)
		if err != nil || ok {
			return nil, err
		}
	}
	if len(out) == 1 {
		return nil, nil
	}
	return out, nil
}

// held counts the cases assign answers ok on with any of the rows each
// reaches (the last of a rider's trips is one of them).
func (s *search) held(ctx context.Context, cases []Bound, params []string, assign map[string]Binding) (int, error) {
	n := 0
	for _, b := range cases {
		for v := 0; v < b.Variants(); v++ {
			b.Variant = v
			ok, _, _, err := s.try(ctx, b, params, assign)
			if err != nil {
				return 0, err
			}
			if ok {
				n++
				break
			}
		}
	}
	return n, nil
}

func with(a map[string]Binding, p string, b Binding) map[string]Binding {
	out := make(map[string]Binding, len(a))
	for k, v := range a {
		out[k] = v
	}
	out[p] = b
	return out
}

func first(xs []Binding, n int) []Binding {
	if len(xs) > n {
		return xs[:n]
	}
	return xs
}

func nilUnless(ok bool, a map[string]Binding) map[string]Binding {
	if ok {
		return a
	}
	return nil
}

// sharedRow is the i-th distinct value of a shared way's column among the
// rows tried.
func (s *search) sharedRow(a Binding, i int) (any, bool) {
	seen := map[string]bool{}
	n := 0
	for _, r := range s.g.Sample(a.Table, sharedRows*3) {
		v := r[a.Column]
		if v == nil || seen[Text(v)] {
			continue
		}
		seen[Text(v)] = true
		if n == i {
			return v, true
		}
		n++
		if n >= sharedRows {
			break
		}
	}
	return nil, false
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// loose is the binding of an argument no column fits: words when it is
// plain text, a value written from its pattern or format, else unbound.
func (s *search) loose(p string) Binding { return s.g.loose(s.t, p) }

// loose is the binding of an argument of t no column holds: free text, or
// a value written from its schema's pattern or bounds (FromPattern), or
// none.
func (g *Graph) loose(t *contract.Tool, p string) Binding {
	ps := paramSchema(t, p)
	typ, _ := ps["type"].(string)
	b := Binding{Tool: t.Name, Param: p}
	_, pat := ps["pattern"]
	_, f := ps["format"]
	switch {
	case (typ == "string" || typ == "") && !pat && !f:
		b.How = FreeText
	default:
		if _, ok := g.guess(p, typ, ps, Bound{Rows: map[string][]Row{}}); ok {
			b.How = FromPattern
		} else {
			b.How = Unbound
		}
	}
	return b
}

func isNew(param string) bool {
	ws := words(param)
	return len(ws) > 1 && (ws[0] == "new" || ws[0] == "replacement")
}

// takesFresh reports whether an argument bound to a column may take a fresh
// value: the column is unique (alone or with others) and can take one.
func (g *Graph) takesFresh(table, col string) bool {
	t := g.C.Table(table)
	if t == nil {
		return false
	}
	in := t.IsUnique(col)
	for _, u := range append([][]string{t.PrimaryKey}, t.Unique...) {
		for _, c := range u {
			in = in || c == col
		}
	}
	if !in {
		return false
	}
	if _, isFK := g.fkOf(table, col); isFK {
		return false
	}
	return g.freshable(t, []string{col}) == col
}

// Cases picks up to n rows a tool is rehearsed on, as cases: rows of the
// table its first record argument names (else the caller table), those
// reaching every table its arguments are bound to first.
func (g *Graph) Cases(t *contract.Tool, bs Bindings, n int) []Bound {
	assign := map[string]Binding{}
	for _, p := range t.ParamNames() {
		if b, ok := bs.Of(t.Name, p); ok {
			assign[p] = b
		}
	}
	s := &search{g: g, t: t}
	cs := s.casesFor(assign)
	if len(cs) > n {
		cs = cs[:n]
	}
	return cs
}

// casesOf returns the cases for an assignment, from the cache.
func (s *search) casesOf(assign map[string]Binding) []Bound {
	var tables []string
	for _, p := range s.t.ParamNames() {
		if a := assign[p]; a.Table != "" && a.Source == FromCase && a.How != Fresh {
			tables = append(tables, a.Table)
		}
	}
	key := s.anchor(assign) + "\x00" + strings.Join(tables, ",")
	if cs, ok := s.byReach[key]; ok {
		return cs
	}
	if s.byReach == nil {
		s.byReach = map[string][]Bound{}
	}
	cs := s.casesFor(assign)
	s.byReach[key] = cs
	return cs
}

// anchor is the argument whose table the cases are rows of: the first that
// names a record of the case's own.
func (s *search) anchor(assign map[string]Binding) string {
	g := s.g
	for _, p := range s.t.ParamNames() {
		b := assign[p]
		if b.Table == "" || b.How == Fresh || b.Source != FromCase {
			continue
		}
		if tb := g.C.Table(b.Table); tb != nil && tb.IsUnique(b.Column) && len(g.Rows(b.Table)) > 0 {
			return p
		}
	}
	return ""
}

// casesFor picks the rows a tool is rehearsed on: rows of the table its first
// record argument names (else the caller table), those reaching every table
// the arguments are bound to first.
func (s *search) casesFor(assign map[string]Binding) []Bound {
	g := s.g
	table := ""
	if a := s.anchor(assign); a != "" {
		table = assign[a].Table
	}
	if table == "" && g.C.Caller != nil {
		table = g.C.Caller.Table
	}
	if table == "" {
		table = s.mostBound(assign)
	}
	if table == "" || g.PK(table) == "" && len(g.C.Table(table).PrimaryKey) == 0 {
		return []Bound{{Rows: map[string][]Row{}, Person: probePerson()}}
	}
	// A row with several owners (a parcel's sender and recipient) is a
	// case of each in turn, its first owner's cases first: some acts are
	// one owner's alone.
	roles := g.OwnerRoles(table)
	if roles == nil {
		roles = []string{""}
	}
	var out []Bound
	for _, role := range roles {
		out = append(out, s.casesAs(assign, table, role)...)
	}
	if len(out) == 0 {
		out = []Bound{{Table: table, Rows: map[string][]Row{}, Person: probePerson()}}
	}
	return out
}

// casesAs are casesFor's cases of the rows of table, each for its owner
// through role ("": its first).
func (s *search) casesAs(assign map[string]Binding, table, role string) []Bound {
	g := s.g
	var reaching, rest []Bound
	for i, r := range g.Sample(table, discoverCases*2) {
		b := g.bindAs(table, r, role)
		b.Ordinal, b.Person = i, probePerson()
		all := true
		for _, a := range assign {
			if a.Table != "" && a.Source == FromCase && a.How != Fresh && len(b.Rows[a.Table]) == 0 {
				all = false
			}
		}
		if all {
			reaching = append(reaching, b)
		} else {
			rest = append(rest, b)
		}
	}
	// Cases that reach every table first, but not only them (the rows
	// reaching one table may all be in a state the tool refuses), each
	// spread over the sample rather than its first rows.
	nReach := min(len(reaching), max(discoverCases*2/3, discoverCases-len(rest)))
	return append(spreadOf(reaching, nReach), spreadOf(rest, discoverCases-nReach)...)
}

// mostBound is the table most arguments take the case's own row of, or "".
func (s *search) mostBound(assign map[string]Binding) string {
	n := map[string]int{}
	best := ""
	for _, p := range s.t.ParamNames() {
		a := assign[p]
		if a.Table == "" || a.Source != FromCase || a.How == Fresh || len(s.g.Rows(a.Table)) == 0 {
			continue
		}
		n[a.Table]++
		if best == "" || n[a.Table] > n[best] {
			best = a.Table
		}
	}
	return best
}

// probePerson is who rehearsals call as: fresh values from the first slots.
func probePerson() Person { return Person{First: "Probe", Last: "Caller", Number: 1} }

// spreadOf takes n items spread evenly over xs.
func spreadOf(xs []Bound, n int) []Bound {
	if n >= len(xs) {
		return xs
	}
	out := make([]Bound, 0, n)
	for k := 0; k < n; k++ {
		out = append(out, xs[k*len(xs)/n])
	}
	return out
}
