package contract

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseSchemaSQL(t *testing.T) {
	src := `
-- comment with ; and 'quote
CREATE TABLE IF NOT EXISTS "Accounts" (
    "Id"   bigint GENERATED ALWAYS AS IDENTITY,
    owner  text COLLATE "C" NOT NULL,
    tags   text[] DEFAULT '{}'::text[],
    body   text DEFAULT $$a ; 'b'$$,
    esc    text DEFAULT E'it\'s',
    total  numeric GENERATED ALWAYS AS (1 + 2) STORED,
    PRIMARY KEY ("Id")
);
/* a /* nested */ comment; */
create unlogged table entries (
    id integer primary key,
    account bigint not null,
    parent integer references entries,
    kind text check (kind in ('a', 'b')),
    constraint acct foreign key (account) references "Accounts" ("Id") on delete cascade,
    unique (account, kind),
    exclude using gist (kind with =)
);
CREATE INDEX ON entries (account);
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS e_kind ON ONLY entries USING btree (kind);
`
	tables, ps := ParseSchemaSQL(src)
	if len(ps) > 0 {
		t.Fatalf("problems: %v", ps)
	}
	want := []Table{
		{Name: "Accounts", Line: 3, PrimaryKey: []string{"Id"}, Columns: []Column{
			{Name: "Id", Type: "bigint", NotNull: true, Default: "identity"},
			{Name: "owner", Type: "text", NotNull: true},
			{Name: "tags", Type: "text[]", Default: "'{}'::text[]"},
			{Name: "body", Type: "text", Default: "'a ; ''b'''"},
			{Name: "esc", Type: "text", Default: "'it''s'"},
			{Name: "total", Type: "numeric", Default: "generated"},
		}},
		{Name: "entries", Line: 13, PrimaryKey: []string{"id"}, Columns: []Column{
			{Name: "id", Type: "integer", NotNull: true},
			{Name: "account", Type: "bigint", NotNull: true, References: "Accounts.Id"},
			{Name: "parent", Type: "integer", References: "entries.id"},
			{Name: "kind", Type: "text"},
		},
			Unique: [][]string{{"account", "kind"}, {"kind"}},
			Checks: []Check{{Expr: "kind in('a','b')", Column: "kind", Op: "in", Values: []string{"a", "b"}}}},
	}
	if !reflect.DeepEqual(tables, want) {
		t.Errorf("tables\n got %+v\nwant %+v", tables, want)
	}
}

func TestParseSchemaSQLUniqueAndChecks(t *testing.T) {
	src := `
CREATE TABLE slots (
    slot_id   text PRIMARY KEY CHECK (slot_id ~ '^SLT-[0-9]{6}$'),
    provider  text NOT NULL,
    starts_at timestamptz NOT NULL,
    minutes   integer NOT NULL CHECK (minutes IN (15, 30)),
    mrn       text CONSTRAINT mrn_unique UNIQUE CHECK ((mrn LIKE 'MRN%')),
    vin       char(17) UNIQUE,
    year      integer CHECK (year BETWEEN 1990 AND 2027),
    amount    numeric CHECK (amount >= 0),
    status    text,
    UNIQUE (provider, starts_at),
    CONSTRAINT vin_len CHECK (length(vin) = 17),
    CHECK ((status = 'cancelled') = (minutes IS NULL)),
    CHECK (status <> 'x')
);
CREATE UNIQUE INDEX live_slot ON slots (provider) WHERE status = 'open';
CREATE UNIQUE INDEX lower_status ON slots (lower(status));
CREATE UNIQUE INDEX same_as_pk ON slots (slot_id);
`
	tables, ps := ParseSchemaSQL(src)
	if len(ps) > 0 {
		t.Fatalf("problems: %v", ps)
	}
	tb := tables[0]
	if want := [][]string{{"mrn"}, {"vin"}, {"provider", "starts_at"}, {"provider"}}; !reflect.DeepEqual(tb.Unique, want) {
		t.Errorf("unique %v, want %v", tb.Unique, want)
	}
	if !tb.IsUnique("starts_at", "provider") || !tb.IsUnique("slot_id") || tb.IsUnique("status") {
		t.Errorf("IsUnique wrong for %v", tb.Unique)
	}
	type simple struct{ col, op, vals string }
	var got []simple
	for _, c := range tb.Checks {
		got = append(got, simple{c.Column, c.Op, strings.Join(c.Values, "|")})
	}
	want := []simple{
		{"slot_id", "~", "^SLT-[0-9]{6}$"}, {"minutes", "in", "15|30"}, {"mrn", "like", "MRN%"},
		{"year", "between", "1990|2027"}, {"amount", ">=", "0"}, {"vin", "length", "17"},
		{"", "", ""}, {"status", "<>", "x"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("checks\n got %v\nwant %v", got, want)
	}
	if ck := tb.ChecksOn("minutes"); len(ck) != 1 || ck[0].Op != "in" {
		t.Errorf("ChecksOn(minutes) = %v", ck)
	}
	if e := tb.Checks[6].Expr; !strings.Contains(e, "cancelled") {
		t.Errorf("a complex check keeps its text, got %q", e)
	}
}

func TestParseSchemaSQLProblems(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      []string // problem prefixes, in order
	}{
		{"extension", "CREATE EXTENSION pgcrypto;\nCREATE TABLE a (id int);",
			[]string{"world/schema.sql:1: schema-sql: CREATE EXTENSION is not allowed"}},
		{"qualified", "CREATE TABLE public.a (id int);\nCREATE INDEX ON public.a (id);",
			[]string{"world/schema.sql:1: schema-sql: schema qualifiers are not allowed (table a)",
				"world/schema.sql:2: schema-sql: schema qualifiers are not allowed (index on a)"}},
		{"qualified reference", "CREATE TABLE a (id int primary key);\nCREATE TABLE b (\n a int REFERENCES public.a);",
			[]string{"world/schema.sql:3: schema-sql: schema qualifiers are not allowed (references a)"}},
		{"other statements", "CREATE TABLE a (id int);\nINSERT INTO a VALUES (1);\nCREATE FUNCTION f() RETURNS int AS $$ select 1; $$ LANGUAGE sql;\nSET search_path = x;",
			[]string{"world/schema.sql:2: schema-sql: only CREATE TABLE and CREATE INDEX statements are accepted, not INSERT",
				"world/schema.sql:3: schema-sql: CREATE FUNCTION is not accepted",
				"world/schema.sql:4: schema-sql: only CREATE TABLE and CREATE INDEX statements are accepted, not SET"}},
		{"unterminated string", "CREATE TABLE a (id int);\nCREATE TABLE b (x text DEFAULT 'oops);",
			[]string{"world/schema.sql:2: schema-sql: unterminated string constant"}},
		{"unterminated comment", "/* x\n\nCREATE TABLE a (id int);",
			[]string{"world/schema.sql:1: schema-sql: unterminated /* comment"}},
		{"unknown reference", "CREATE TABLE b (\n a int REFERENCES a (id)\n);",
			[]string{"world/schema.sql:2: schema-sql: table b references unknown table \"a\""}},
		{"unknown referenced column", "CREATE TABLE a (id int primary key);\nCREATE TABLE b (\n a int,\n FOREIGN KEY (a) REFERENCES a (nope));",
			[]string{"world/schema.sql:4: schema-sql: table b references unknown column a.nope"}},
		{"duplicates", "CREATE TABLE a (id int, id text);\nCREATE TABLE a (x int);",
			[]string{"world/schema.sql:1: schema-sql: table a: column \"id\" is defined twice",
				"world/schema.sql:2: schema-sql: table \"a\" is created twice"}},
		{"two primary keys", "CREATE TABLE a (id int primary key, b int, primary key (b));",
			[]string{"world/schema.sql:1: schema-sql: table a has more than one primary key"}},
		{"pk unknown column", "CREATE TABLE a (id int, primary key (nope));",
			[]string{"world/schema.sql:1: schema-sql: table a: primary key names unknown column \"nope\""}},
		{"index on unknown table", "CREATE TABLE a (id int);\nCREATE INDEX i ON b (id);",
			[]string{"world/schema.sql:2: schema-sql: index on unknown table \"b\""}},
		{"table as", "CREATE TABLE a AS SELECT 1;",
			[]string{"world/schema.sql:1: schema-sql: CREATE TABLE a: expected a column list"}},
		{"trailing options", "CREATE TABLE a (id int) INHERITS (b);",
			[]string{"world/schema.sql:1: schema-sql: CREATE TABLE a: nothing may follow the column list (INHERITS ...)"}},
		{"no tables", "-- nothing\n",
			[]string{"world/schema.sql: schema-sql: no CREATE TABLE statement"}},
		{"no type", "CREATE TABLE a (id);",
			[]string{"world/schema.sql:1: schema-sql: table a has no columns", "world/schema.sql:1: schema-sql: table a: column id has no type"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, ps := ParseSchemaSQL(tc.src)
			ps.Sort()
			if len(ps) != len(tc.want) {
				t.Fatalf("got %d problems, want %d:\n%v", len(ps), len(tc.want), ps)
			}
			for i, p := range ps {
				if !strings.HasPrefix(p.String(), tc.want[i]) {
					t.Errorf("problem %d:\n got %s\nwant %s...", i, p, tc.want[i])
				}
			}
		})
	}
}

func FuzzParseSchemaSQL(f *testing.F) {
	for _, s := range []string{
		"CREATE TABLE a (id int PRIMARY KEY, b text NOT NULL DEFAULT 'x', FOREIGN KEY (b) REFERENCES a (id));",
		"create table \"Q\" (\"x\"\"y\" int references \"Q\"); create index on \"Q\" (x);",
		"/* /* */ */ -- x\nCREATE TABLE a (t text DEFAULT $x$;$x$, e text default E'\\'');",
		"CREATE TABLE a (id serial, CONSTRAINT p PRIMARY KEY (id), CHECK (id > 0), EXCLUDE USING gist (id WITH =));",
		"CREATE EXTENSION x; CREATE TABLE public.a (); CREATE INDEX ON",
		"CREATE TABLE a (b numeric(10,2)[] GENERATED ALWAYS AS (1) STORED, c int GENERATED BY DEFAULT AS IDENTITY (START 1));",
		"CREATE TABLE a ((((",
		"$1 $$ $a",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		tables, ps := ParseSchemaSQL(src)
		for _, p := range ps {
			if p.Code != CodeSchemaSQL || p.File != SchemaFile || p.Line < 0 {
				t.Fatalf("bad problem %+v", p)
			}
		}
		for _, tab := range tables {
			if tab.Name == "" || tab.Line < 1 {
				t.Fatalf("bad table %+v", tab)
			}
			for _, k := range tab.PrimaryKey {
				if tab.Column(k) == nil && len(ps) == 0 {
					t.Fatalf("primary key %q not a column of %+v", k, tab)
				}
			}
		}
	})
}

// TestParseSchemaSQLUnicodeNames: U&"..." names are the names they decode
// to, as PostgreSQL reads them.
func TestParseSchemaSQLUnicodeNames(t *testing.T) {
	tables, ps := ParseSchemaSQL(`CREATE TABLE U&"d\0061ta" (U&"!0069d" UESCAPE '!' int PRIMARY KEY, note text DEFAULT U&'\0041');
CREATE TABLE other (x int REFERENCES data (id));`)
	if len(ps) > 0 {
		t.Fatalf("problems: %v", ps)
	}
	if len(tables) != 2 || tables[0].Name != "data" || tables[0].Columns[0].Name != "id" ||
		tables[0].Columns[1].Default != "'A'" || tables[1].Columns[0].References != "data.id" {
		t.Errorf("tables: %+v", tables)
	}
	if _, ps := ParseSchemaSQL(`CREATE TABLE U&"\zz" (id int);`); !ps.Has(CodeSchemaSQL) {
		t.Errorf("a malformed Unicode escape is not a schema-sql problem: %v", ps)
	}
}
