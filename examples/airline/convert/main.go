// Command convert turns tau-bench's airline domain data into the world of
// examples/airline: world/schema.sql and one world/seed/<table>.jsonl per
// table.
//
//	go run ./examples/airline/convert -src /path/to/tau-bench/tau_bench/envs/airline -out examples/airline/world
//
// It reads data/users.json, data/reservations.json, data/flights.json and the
// airport list of tools/list_all_airports.py. The output depends only on the
// input: objects keep their published order (a "position" column records it),
// so running it twice writes the same bytes.
package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	src := flag.String("src", "", "tau-bench's tau_bench/envs/airline directory")
	out := flag.String("out", "examples/airline/world", "world directory to write (schema.sql and seed/)")
	flag.Parse()
	if *src == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: convert -src TAU_BENCH/tau_bench/envs/airline [-out DIR]")
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
