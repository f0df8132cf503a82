// Command convert turns tau-bench's retail domain data into the world of
// testdata/contracts/tau-retail: world/schema.sql and one
// world/seed/<table>.jsonl per table.
//
//	go run ./testdata/contracts/tau-retail/convert -src /path/to/tau-bench/tau_bench/envs/retail -out testdata/contracts/tau-retail/world
//
// It reads data/users.json, data/orders.json and data/products.json. The
// output depends only on the input: objects keep their published order (a
// "position" column records it), so running it twice writes the same bytes.
package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	src := flag.String("src", "", "tau-bench's tau_bench/envs/retail directory")
	out := flag.String("out", "testdata/contracts/tau-retail/world", "world directory to write (schema.sql and seed/)")
	flag.Parse()
	if *src == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: convert -src TAU_BENCH/tau_bench/envs/retail [-out DIR]")
		os.Exit(2)
	}
	counts, err := convert(*src, *out)
	if err != nil {
		fmt.Fprintln(os.Stderr, "convert:", err)
		os.Exit(1)
	}
	for _, c := range counts {
		fmt.Printf("%-24s %6d rows\n", c.table, c.rows)
	}
}
