package contract_test

import (
	"fmt"
	"os"
	"testing/fstest"

	"github.com/suitegen/suitegen/pkg/contract"
)

// A contract is read from a directory, or from any fs.FS: an embedded tree,
// or files kept elsewhere (suitegen's ledger keeps them by hash). Either way
// every problem is reported with its file and line, and a contract with any
// problem must not be used.
func ExampleLoadFS() {
	c, problems, err := contract.LoadFS(os.DirFS("testdata/good"))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s: %d tools, %d problems\n", c.Agent, len(c.Tools), len(problems))

	// The same files from memory, with the schema left out.
	files := fstest.MapFS{}
	for name, body := range c.Files {
		if name != "world/schema.sql" {
			files[name] = &fstest.MapFile{Data: body}
		}
	}
	_, problems, _ = contract.LoadFS(files)
	for _, p := range problems {
		if p.Code == contract.CodeMissingFile {
			fmt.Println(p)
		}
	}
	// Output:
	// shop-support: 4 tools, 0 problems
	// world/schema.sql: missing-file: world/schema.sql is missing
}
