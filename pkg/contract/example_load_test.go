package contract_test

import (
	"fmt"
	"log"

	"github.com/suitegen/suitegen/pkg/contract"
)

// Load a contract directory; a contract with any problem must not be used.
func ExampleLoad() {
	c, problems, err := contract.Load("../../examples/retail")
	if err != nil {
		log.Fatal(err) // the directory could not be read at all
	}
	if len(problems) > 0 {
		log.Fatal(problems)
	}
	fmt.Printf("%s: %d tools, %d use cases, %d tables\n", c.Agent, len(c.Tools), len(c.UseCases), len(c.Tables))
	// Output:
	// shop-support: 14 tools, 12 use cases, 7 tables
}

// Every problem Load finds is reported at once, each with its file, line
// and stable code, so an author fixes a contract in as few rounds as possible.
func ExampleLoad_problems() {
	_, problems, err := contract.Load("testdata/bad/many")
	if err != nil {
		log.Fatal(err)
	}
	for _, p := range problems[:4] {
		fmt.Println(p)
	}
	fmt.Println(len(problems), "problems")
	fmt.Println(problems.Has(contract.CodeSchemaSQL))
	// Output:
	// contract.yaml:3: bad-value: modality "video": want chat or voice
	// contract.yaml:9: unknown-caller-table: caller table "customers" is not in schema.sql
	// contract.yaml:15: duplicate-rule: rule "verify-identity" is declared twice (first on line 13)
	// contract.yaml:50: unknown-param: same: "order_number" is not a parameter of cancel_pending_order
	// 12 problems
	// true
}

// ParseSchemaSQL reads what a world's schema.sql declares; anything a
// world may not contain is a problem, not an error.
func ExampleParseSchemaSQL() {
	tables, problems := contract.ParseSchemaSQL(`
CREATE TABLE users (user_id text PRIMARY KEY, email text NOT NULL UNIQUE);
CREATE TABLE orders (
  order_id text PRIMARY KEY,
  user_id  text NOT NULL REFERENCES users,
  status   text NOT NULL CHECK (status IN ('pending', 'delivered'))
);
CREATE VIEW open_orders AS SELECT * FROM orders;`)
	for _, t := range tables {
		for _, col := range t.Columns {
			fmt.Printf("%s.%s %s not-null=%v references=%q\n", t.Name, col.Name, col.Type, col.NotNull, col.References)
		}
		for _, ck := range t.Checks {
			fmt.Printf("%s: %s %s %v\n", t.Name, ck.Column, ck.Op, ck.Values)
		}
	}
	fmt.Println(problems)
	// Output:
	// users.user_id text not-null=true references=""
	// users.email text not-null=true references=""
	// orders.order_id text not-null=true references=""
	// orders.user_id text not-null=true references="users.user_id"
	// orders.status text not-null=true references=""
	// orders: status in [pending delivered]
	// world/schema.sql:8: schema-sql: CREATE VIEW is not accepted: only CREATE TABLE and CREATE INDEX
}
