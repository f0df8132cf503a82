package contractgen

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Options shape a generated contract.
type Options struct {
	// Dir is where the contract directory is written; it is created and
	// must not hold a contract already.
	Dir string
	// Tools and Tables are the sizes aimed at; 0 deals them at random (10–25
	// tools, 8–20 tables). Fewer are written when the dealt world has fewer
	// ways to act or fewer tables to add.
	Tools, Tables int
}

// ErrNoDir is an Options without a Dir.
var ErrNoDir = errors.New("contractgen: no directory to write to")

// gen holds one contract while it is dealt.
type gen struct {
	r      *rand.Rand
	seed   int64
	now    time.Time
	nowStr string
	today  time.Time

	p      *person
	tier   *tiers
	res    []*resource
	tables []*table

	tools    []*toolSpec
	useCases []ucSpec
	rules    []ruleSpec
	files    map[string]string
}

// Generate writes the contract of seed into opts.Dir and returns its ground
// truth. The same seed and options write the same files.
func Generate(seed int64, opts Options) (Contract, error) {
	if opts.Dir == "" {
		return Contract{}, ErrNoDir
	}
	g := &gen{r: rand.New(rand.NewPCG(uint64(seed), 0x636f6e7472616374)), seed: seed, files: map[string]string{}}
	if opts.Tools <= 0 {
		opts.Tools = 10 + g.r.IntN(16)
	}
	if opts.Tables <= 0 {
		opts.Tables = 8 + g.r.IntN(13)
	}
	g.clock()
	g.world(opts.Tables)
	g.toolset(opts.Tools)
	g.useCasesAndRules()
	c, err := g.write(opts.Dir)
	if err != nil {
		return Contract{}, fmt.Errorf("contractgen: seed %d: %w", seed, err)
	}
	return c, nil
}

func (g *gen) pick(xs []string) string { return xs[g.r.IntN(len(xs))] }

func (g *gen) chance(p float64) bool { return g.r.Float64() < p }

// clock deals the world's now: a day of 2026 at a local hour, in one of a few
// offsets, so that handlers comparing dates with now[:10] see the local day.
func (g *gen) clock() {
	offsets := []int{0, -5 * 3600, -8 * 3600, 3600, 5*3600 + 1800}
	loc := time.FixedZone("", offsets[g.r.IntN(len(offsets))])
	g.now = time.Date(2026, 1, 5, 8+g.r.IntN(10), 15*g.r.IntN(4), 0, 0, loc).AddDate(0, 0, g.r.IntN(330))
	g.nowStr = g.now.Format(time.RFC3339)
	y, m, d := g.now.Date()
	g.today = time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// world deals the tables: the caller's, an enum-keyed tier table, two to four
// owned records (some hanging off another), their credits and line items,
// and side tables up to the size aimed at.
func (g *gen) world(want int) {
	pk := persons[g.r.IntN(len(persons))]
	p := &person{kind: pk, table: pk.plural,
		pk:     g.pick([]string{pk.singular + "_id", "id", pk.singular + "_no"}),
		first:  g.pick([]string{"first_name", "given_name"}),
		last:   g.pick([]string{"last_name", "family_name", "surname"}),
		birth:  g.pick([]string{"date_of_birth", "dob", "birth_date", "born_on"}),
		email:  "email",
		phone:  g.pick([]string{"phone", "mobile"}),
		status: "status",
	}
	ti := tierTables[g.r.IntN(len(tierTables))]
	t := &tiers{table: ti.table, noun: ti.noun, codes: tierCodes[g.r.IntN(len(tierCodes))]}
	p.tier = t.noun
	g.p, g.tier = p, t

	kinds := slices.Clone(resources)
	g.r.Shuffle(len(kinds), func(i, j int) { kinds[i], kinds[j] = kinds[j], kinds[i] })
	n := 2 + g.r.IntN(3)
	for i := 0; i < n; i++ {
		k := kinds[i]
		r := &resource{kind: k, table: k.plural, prefix: k.prefix,
			pk:         g.pick([]string{k.noun + "_id", "id", "ref"}),
			kindCol:    g.pick([]string{"kind", "category", "class"}),
			statusCol:  "status",
			amountCol:  g.pick([]string{"amount", "total", "price"}),
			startsCol:  g.pick([]string{"starts_on", "start_date", "begins_on"}),
			endsCol:    g.pick([]string{"ends_on", "end_date"}),
			createdCol: "created_at",
			closedCol:  g.pick([]string{"closed_at", "cancelled_at"}),
			kinds:      kindSets[g.r.IntN(len(kindSets))],
			statuses:   statusSets[g.r.IntN(len(statusSets))],
		}
		// A record after the first may hang off an earlier one owned
		// directly: the chain of foreign keys leads to the caller through it.
		if i > 0 && g.chance(0.4) {
			for _, c := range g.res {
				if c.parent == nil {
					r.parent = c
					r.parentCol = c.kind.noun + "_id"
					break
				}
			}
		}
		if r.parent == nil {
			r.owner = p.pk
			if r.owner == "id" {
				r.owner = p.kind.singular + "_id"
			}
		}
		r.events = k.noun + g.pick([]string{"_credits", "_adjustments", "_events"})
		r.eventFK = k.noun + "_ref"
		if g.chance(0.5) {
			r.lines = k.noun + g.pick([]string{"_lines", "_items", "_extras"})
			r.lineFK = k.noun + "_id"
		}
		g.res = append(g.res, r)
	}
	g.seedPeople()
	g.tables = append(g.tables, g.tierTable(), g.personTable())
	for _, r := range g.res {
		g.seedResource(r)
		g.tables = append(g.tables, g.resourceTable(r), g.eventsTable(r))
		if r.lines != "" {
			g.tables = append(g.tables, g.linesTable(r))
		}
	}
	for _, f := range g.fillers() {
		if len(g.tables) >= want {
			break
		}
		g.tables = append(g.tables, f)
	}
}

func (g *gen) tierTable() *table {
	t := g.tier
	tb := &table{name: t.table, ddl: fmt.Sprintf(`-- What a %s entitles to: the most a credit may be.
CREATE TABLE %s (
    code        text PRIMARY KEY CHECK (code IN (%s)),
    label       text NOT NULL,
    max_credit  numeric(10,2) NOT NULL CHECK (max_credit > 0),
    rank        integer NOT NULL UNIQUE CHECK (rank BETWEEN 1 AND 9)
);`, t.noun, t.table, sqlList(t.codes))}
	for i, c := range t.codes {
		var x row
		x.set("code", c)
		x.set("label", strings.ToUpper(c[:1])+c[1:])
		x.set("max_credit", []float64{50, 150, 400}[i])
		x.set("rank", i+1)
		tb.rows = append(tb.rows, x)
	}
	return tb
}

func (g *gen) seedPeople() {
	p := g.p
	n := 8 + g.r.IntN(6)
	pairs := g.r.Perm(len(firstNames) * len(lastNames))
	for i := 0; i < n; i++ {
		fn, ln := firstNames[pairs[i]%len(firstNames)], lastNames[pairs[i]/len(firstNames)]
		var x row
		x.set(p.pk, fmt.Sprintf("%s-%05d", p.kind.prefix, 10007+i*731+g.r.IntN(300)))
		x.set(p.first, fn)
		x.set(p.last, ln)
		x.set(p.birth, day(time.Date(1950, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, g.r.IntN(54*365))))
		x.set(p.email, fmt.Sprintf("%s.%s%d@example.org", strings.ToLower(fn), strings.ToLower(ln), i))
		x.set(p.phone, fmt.Sprintf("+1312555%04d", 1000+i*37))
		st := "active"
		switch {
		case i%5 == 3:
			st = "locked"
		case i%7 == 5:
			st = "closed"
		}
		x.set(p.status, st)
		x.set(p.tier, g.pick(g.tier.codes))
		x.set("joined_on", day(g.today.AddDate(0, 0, -30-g.r.IntN(2000))))
		p.rows = append(p.rows, x)
	}
}

func (g *gen) personTable() *table {
	p := g.p
	tb := &table{name: p.table, rows: p.rows, ddl: fmt.Sprintf(`-- Who calls: one row per %s, identified by name and date of birth.
CREATE TABLE %s (
    %s text PRIMARY KEY CHECK (%s ~ '^%s-[0-9]{5}$'),
    %s text NOT NULL,
    %s text NOT NULL,
    %s date NOT NULL,
    %s text NOT NULL UNIQUE CHECK (%s LIKE '_%%@_%%'),
    %s text NOT NULL UNIQUE CHECK (%s ~ '^\+1[0-9]{10}$'),
    %s text NOT NULL CHECK (%s IN ('active', 'locked', 'closed')),
    %s text NOT NULL REFERENCES %s (code),
    joined_on date NOT NULL
);
CREATE UNIQUE INDEX %s_identity ON %s (%s, %s, %s);`,
		p.kind.singular, p.table, p.pk, p.pk, p.kind.prefix, p.first, p.last, p.birth, p.email, p.email,
		p.phone, p.phone, p.status, p.status, p.tier, g.tier.table, p.table, p.table, p.first, p.last, p.birth)}
	return tb
}

// seedResource deals a record's rows: every status, starts both ahead of and
// behind today, some with line items and earlier credits.
func (g *gen) seedResource(r *resource) {
	owners := g.p.rows
	if r.parent != nil {
		owners = r.parent.rows
	}
	seq := 1000 + g.r.IntN(500)
	for _, o := range owners {
		k := 1 + g.r.IntN(3)
		if r.parent != nil {
			k = g.r.IntN(2) + 1
		}
		for j := 0; j < k; j++ {
			seq += 1 + g.r.IntN(40)
			var x row
			x.set(r.pk, fmt.Sprintf("%s-%04d", r.prefix, seq))
			if r.parent == nil {
				x.set(r.owner, o.get(g.p.pk))
			} else {
				x.set(r.parentCol, o.get(r.parent.pk))
			}
			x.set(r.kindCol, g.pick(r.kinds))
			var st string
			switch v := g.r.IntN(100); {
			case v < 45:
				st = r.statuses[0]
			case v < 80:
				st = r.statuses[1]
			case v < 92:
				st = r.statuses[2]
			default:
				st = r.statuses[3]
			}
			x.set(r.statusCol, st)
			x.set(r.amountCol, cents(2000+g.r.IntN(88000)))
			var starts time.Time
			switch {
			case st == r.statuses[0] && g.chance(0.8):
				starts = g.today.AddDate(0, 0, 1+g.r.IntN(40))
			case st == r.statuses[0]:
				starts = g.today.AddDate(0, 0, -g.r.IntN(5))
			default:
				starts = g.today.AddDate(0, 0, -5-g.r.IntN(60))
			}
			x.set(r.startsCol, day(starts))
			if g.chance(0.7) {
				x.set(r.endsCol, day(starts.AddDate(0, 0, 1+g.r.IntN(14))))
			} else {
				x.set(r.endsCol, nil)
			}
			created := starts.AddDate(0, 0, -10-g.r.IntN(50)).Add(9 * time.Hour)
			x.set(r.createdCol, created.Format(time.RFC3339))
			if st == r.statuses[2] {
				x.set(r.closedCol, created.Add(48*time.Hour).Format(time.RFC3339))
			} else {
				x.set(r.closedCol, nil)
			}
			r.rows = append(r.rows, x)
		}
	}
}

func (g *gen) resourceTable(r *resource) *table {
	var b strings.Builder
	fmt.Fprintf(&b, "-- %s move %s; only %s ones can be changed or cancelled.\n", strings.ToUpper(r.table[:1])+r.table[1:],
		strings.Join(r.statuses, ", "), r.statuses[0])
	fmt.Fprintf(&b, "CREATE TABLE %s (\n    %s text PRIMARY KEY CHECK (%s ~ '^%s-[0-9]{4}$'),\n", r.table, r.pk, r.pk, r.prefix)
	if r.parent == nil {
		fmt.Fprintf(&b, "    %s text NOT NULL REFERENCES %s (%s),\n", r.owner, g.p.table, g.p.pk)
	} else {
		fmt.Fprintf(&b, "    %s text NOT NULL REFERENCES %s (%s),\n", r.parentCol, r.parent.table, r.parent.pk)
	}
	fmt.Fprintf(&b, "    %s text NOT NULL CHECK (%s IN (%s)),\n", r.kindCol, r.kindCol, sqlList(r.kinds))
	fmt.Fprintf(&b, "    %s text NOT NULL CHECK (%s IN (%s)),\n", r.statusCol, r.statusCol, sqlList(r.statuses))
	fmt.Fprintf(&b, "    %s numeric(10,2) NOT NULL CHECK (%s >= 0),\n", r.amountCol, r.amountCol)
	fmt.Fprintf(&b, "    %s date NOT NULL,\n    %s date,\n", r.startsCol, r.endsCol)
	fmt.Fprintf(&b, "    %s timestamptz NOT NULL,\n    %s timestamptz,\n", r.createdCol, r.closedCol)
	fmt.Fprintf(&b, "    CHECK (%s IS NULL OR %s >= %s),\n", r.endsCol, r.endsCol, r.startsCol)
	fmt.Fprintf(&b, "    CHECK (%s <> '%s' OR %s IS NOT NULL)\n);", r.statusCol, r.statuses[2], r.closedCol)
	fk := r.owner
	if r.parent != nil {
		fk = r.parentCol
	}
	fmt.Fprintf(&b, "\nCREATE INDEX %s_by_owner ON %s (%s);", r.table, r.table, fk)
	return &table{name: r.table, ddl: b.String(), rows: r.rows}
}

func (g *gen) eventsTable(r *resource) *table {
	tb := &table{name: r.events, ddl: fmt.Sprintf(`CREATE TABLE %s (
    id          bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    %s text NOT NULL REFERENCES %s (%s),
    kind        text NOT NULL CHECK (kind IN ('refund', 'fee', 'goodwill')),
    amount      numeric(10,2) NOT NULL CHECK (amount > 0),
    note        text,
    created_at  timestamptz NOT NULL
);`, r.events, r.eventFK, r.table, r.pk)}
	for _, x := range r.rows {
		if x.get(r.statusCol) != r.statuses[1] || !g.chance(0.4) {
			continue
		}
		var e row
		e.set(r.eventFK, x.get(r.pk))
		e.set("kind", g.pick([]string{"refund", "refund", "fee", "goodwill"}))
		amt := x.get(r.amountCol).(float64)
		e.set("amount", cents(1+g.r.IntN(int(amt*30))))
		e.set("note", g.pick([]string{"overcharged", "late start", "duplicate charge"}))
		e.set("created_at", g.today.AddDate(0, 0, -1-g.r.IntN(4)).Add(11*time.Hour).Format(time.RFC3339))
		tb.rows = append(tb.rows, e)
	}
	return tb
}

func (g *gen) linesTable(r *resource) *table {
	tb := &table{name: r.lines, ddl: fmt.Sprintf(`-- One line per extra on a %s: the record's id and its line number make the key.
CREATE TABLE %s (
    %s text NOT NULL REFERENCES %s (%s),
    line_no     integer NOT NULL CHECK (line_no BETWEEN 1 AND 99),
    description text NOT NULL,
    amount      numeric(10,2) NOT NULL CHECK (amount > 0),
    PRIMARY KEY (%s, line_no)
);`, r.kind.noun, r.lines, r.lineFK, r.table, r.pk, r.lineFK)}
	items := []string{"insurance", "extra luggage", "priority handling", "late checkout", "gift wrap", "parking"}
	for _, x := range r.rows {
		for n := 1; n <= g.r.IntN(3); n++ {
			var l row
			l.set(r.lineFK, x.get(r.pk))
			l.set("line_no", n)
			l.set("description", g.pick(items))
			l.set("amount", cents(500+g.r.IntN(5000)))
			tb.rows = append(tb.rows, l)
		}
	}
	return tb
}

// fillers are side tables a real world holds besides what the tools act on:
// addresses under a composite key, preferences with multi-column checks,
// staff, sites, documents, notes on records.
func (g *gen) fillers() []*table {
	p := g.p
	fk := p.kind.singular + "_ref"
	var out []*table
	addr := &table{name: p.kind.singular + "_addresses", ddl: fmt.Sprintf(`CREATE TABLE %s_addresses (
    %s text NOT NULL REFERENCES %s (%s),
    kind     text NOT NULL CHECK (kind IN ('home', 'work', 'billing')),
    line1    text NOT NULL,
    city     text NOT NULL,
    postcode text NOT NULL CHECK (postcode ~ '^[0-9]{5}$'),
    PRIMARY KEY (%s, kind)
);`, p.kind.singular, fk, p.table, p.pk, fk)}
	prefs := &table{name: "contact_preferences", ddl: fmt.Sprintf(`CREATE TABLE contact_preferences (
    %s text PRIMARY KEY REFERENCES %s (%s),
    channel    text NOT NULL CHECK (channel IN ('sms', 'email', 'post', 'phone')),
    quiet_from integer NOT NULL,
    quiet_to   integer NOT NULL,
    CHECK (quiet_from BETWEEN 0 AND 23 AND quiet_to BETWEEN 0 AND 23 AND quiet_from <> quiet_to)
);`, fk, p.table, p.pk)}
	docs := &table{name: "identity_documents", ddl: fmt.Sprintf(`CREATE TABLE identity_documents (
    document_no text PRIMARY KEY,
    %s text NOT NULL REFERENCES %s (%s),
    kind        text NOT NULL CHECK (kind IN ('passport', 'licence', 'national_id')),
    issued_on   date NOT NULL,
    expires_on  date NOT NULL,
    CHECK (expires_on > issued_on)
);
CREATE UNIQUE INDEX identity_documents_one_per_kind ON identity_documents (%s, kind);`, fk, p.table, p.pk, fk)}
	for i, x := range p.rows {
		if g.chance(0.6) {
			var a row
			a.set(fk, x.get(p.pk))
			a.set("kind", "home")
			a.set("line1", fmt.Sprintf("%d %s Street", 10+g.r.IntN(900), g.pick(lastNames)))
			a.set("city", g.pick([]string{"Springfield", "Riverton", "Lakeside", "Fairview"}))
			a.set("postcode", fmt.Sprintf("%05d", 10000+g.r.IntN(89999)))
			addr.rows = append(addr.rows, a)
		}
		if g.chance(0.5) {
			var c row
			c.set(fk, x.get(p.pk))
			c.set("channel", g.pick([]string{"sms", "email", "post", "phone"}))
			from := 18 + g.r.IntN(5)
			c.set("quiet_from", from)
			c.set("quiet_to", (from+10)%24)
			prefs.rows = append(prefs.rows, c)
		}
		if g.chance(0.5) {
			var d row
			d.set("document_no", fmt.Sprintf("D%07d", 1000000+i*9173))
			d.set(fk, x.get(p.pk))
			d.set("kind", g.pick([]string{"passport", "licence", "national_id"}))
			issued := g.today.AddDate(-1-g.r.IntN(8), 0, -g.r.IntN(300))
			d.set("issued_on", day(issued))
			d.set("expires_on", day(issued.AddDate(10, 0, 0)))
			docs.rows = append(docs.rows, d)
		}
	}
	staff := &table{name: "staff", ddl: fmt.Sprintf(`CREATE TABLE staff (
    staff_id   text PRIMARY KEY CHECK (staff_id ~ '^E[0-9]{3}$'),
    full_name  text NOT NULL UNIQUE,
    department text NOT NULL CHECK (department IN (%s))
);`, sqlList(departments))}
	for i := 0; i < 5; i++ {
		var s row
		s.set("staff_id", fmt.Sprintf("E%03d", 100+i*11))
		s.set("full_name", firstNames[(i*5)%len(firstNames)]+" "+lastNames[(i*3+7)%len(lastNames)])
		s.set("department", departments[i])
		staff.rows = append(staff.rows, s)
	}
	sites := &table{name: "sites", ddl: `CREATE TABLE sites (
    code      text PRIMARY KEY CHECK (code ~ '^[A-Z]{3}$'),
    city      text NOT NULL,
    opens_at  integer NOT NULL CHECK (opens_at BETWEEN 0 AND 23),
    closes_at integer NOT NULL CHECK (closes_at BETWEEN 1 AND 24),
    CHECK (closes_at > opens_at)
);`}
	for _, c := range []string{"NOR", "SOU", "EAS", "WES"} {
		var s row
		s.set("code", c)
		s.set("city", g.pick([]string{"Springfield", "Riverton", "Lakeside", "Fairview"}))
		s.set("opens_at", 7+g.r.IntN(3))
		s.set("closes_at", 17+g.r.IntN(5))
		sites.rows = append(sites.rows, s)
	}
	holidays := &table{name: "holidays", ddl: `CREATE TABLE holidays (
    day  date PRIMARY KEY,
    name text NOT NULL
);`}
	for i, n := range []string{"New Year", "Spring holiday", "Summer holiday", "Autumn holiday"} {
		var h row
		h.set("day", day(time.Date(2026, time.Month(1+i*3), 1+g.r.IntN(27), 0, 0, 0, 0, time.UTC)))
		h.set("name", n)
		holidays.rows = append(holidays.rows, h)
	}
	// staff comes before the notes that reference it: fillers are taken in
	// order, so a notes table is only reached once staff is in.
	out = append(out, addr, staff, prefs, docs, sites, holidays)
	for _, r := range g.res {
		notes := &table{name: r.kind.noun + "_notes", ddl: fmt.Sprintf(`CREATE TABLE %s_notes (
    id         bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    %s text NOT NULL REFERENCES %s (%s),
    staff_id   text NOT NULL REFERENCES staff (staff_id),
    body       text NOT NULL,
    created_at timestamptz NOT NULL
);`, r.kind.noun, r.eventFK, r.table, r.pk)}
		for _, x := range r.rows {
			if g.chance(0.3) {
				var n row
				n.set(r.eventFK, x.get(r.pk))
				n.set("staff_id", staff.rows[g.r.IntN(len(staff.rows))].get("staff_id"))
				n.set("body", g.pick([]string{"Caller asked about timing", "Confirmed by phone", "Flagged for review"}))
				n.set("created_at", g.today.AddDate(0, 0, -g.r.IntN(20)).Add(14*time.Hour).Format(time.RFC3339))
				notes.rows = append(notes.rows, n)
			}
		}
		out = append(out, notes)
	}
	log := &table{name: "audit_log", ddl: `CREATE TABLE audit_log (
    id     bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    actor  text NOT NULL,
    action text NOT NULL,
    at     timestamptz NOT NULL
);`}
	out = append(out, log)
	return out
}

// write lays the contract out on disk and returns its ground truth.
func (g *gen) write(dir string) (Contract, error) {
	c := Contract{Seed: g.seed, Dir: dir, Agent: g.agent(), Caller: g.p.table + "." + g.p.pk}
	var schema strings.Builder
	fmt.Fprintf(&schema, "-- World of %s: generated from seed %d.\n\n", c.Agent, g.seed)
	for _, t := range g.tables {
		c.Tables = append(c.Tables, t.name)
		schema.WriteString(t.ddl)
		schema.WriteString("\n\n")
		if len(t.rows) == 0 {
			continue
		}
		var seed strings.Builder
		for _, x := range t.rows {
			line, err := x.jsonLine()
			if err != nil {
				return Contract{}, fmt.Errorf("seed of %s: %w", t.name, err)
			}
			seed.WriteString(line)
			seed.WriteByte('\n')
		}
		g.files["world/seed/"+t.name+".jsonl"] = seed.String()
	}
	g.files["world/schema.sql"] = schema.String()
	for _, t := range g.tools {
		g.files[t.truth.Handler] = t.star.String()
		c.Tools = append(c.Tools, t.truth)
	}
	for _, u := range g.useCases {
		c.UseCases = append(c.UseCases, UseCase{ID: u.id, Tools: u.tools, Act: u.act})
	}
	for _, r := range g.rules {
		c.Rules = append(c.Rules, Rule{ID: r.id, Check: r.check})
	}
	g.files["contract.yaml"] = g.yaml(c.Agent)
	if _, err := os.Stat(filepath.Join(dir, "contract.yaml")); err == nil {
		return Contract{}, fmt.Errorf("%s already holds a contract", dir)
	}
	names := make([]string, 0, len(g.files))
	for n := range g.files {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		p := filepath.Join(dir, filepath.FromSlash(n))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return Contract{}, fmt.Errorf("write %s: %w", n, err)
		}
		if err := os.WriteFile(p, []byte(g.files[n]), 0o644); err != nil {
			return Contract{}, fmt.Errorf("write %s: %w", n, err)
		}
	}
	return c, nil
}

func (g *gen) agent() string {
	return fmt.Sprintf("%s-%s-desk-%d", g.p.kind.singular, g.res[0].kind.noun, g.seed&0xffff)
}
