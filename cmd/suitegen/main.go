// Command suitegen: see 'suitegen help' and the README. Run under the name
// planner, writer or reviewer (a link, as in the image), it is that binary.
package main

import (
	"os"

	"github.com/suitegen/suitegen/pkg/cli"
	"github.com/suitegen/suitegen/pkg/runcmd"
)

func main() {
	cli.Add(runcmd.Command())
	cli.Add(runcmd.Revise())
	os.Exit(cli.Main(cli.ProgName(os.Args[0]), os.Args[1:]))
}
