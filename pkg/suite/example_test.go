package suite_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"log"

	"github.com/suitegen/suitegen/pkg/scenario"
	"github.com/suitegen/suitegen/pkg/suite"
)

// Export a written suite (a run's OUT folder) as JSONL: one compact
// scenario per line, in index.json order. The τ-bench formats replay each
// scenario in its world and so need the contract: taubench.Export and
// tau2.Export.
func ExampleExport() {
	var jsonl bytes.Buffer
	if err := suite.Export("testdata/written", suite.FormatJSONL, &jsonl); err != nil {
		log.Fatal(err)
	}
	lines := bufio.NewScanner(&jsonl)
	lines.Buffer(nil, scenario.MaxSize)
	for lines.Scan() {
		var sc scenario.Scenario
		if err := json.Unmarshal(lines.Bytes(), &sc); err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s: %s, %d setup rows, solution %d calls\n", sc.Name, sc.Expects, len(sc.Setup), len(sc.Solution))
	}
	if err := lines.Err(); err != nil {
		log.Fatal(err)
	}
	// Output:
	// cancel-order-succeed-none-7000: succeed, 8 setup rows, solution 3 calls
}
