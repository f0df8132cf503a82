// Command suitegen: see 'suitegen help' and the README.
package main

import (
	"os"

	"github.com/suitegen/suitegen/internal/runcmd"
	"github.com/suitegen/suitegen/pkg/cli"
)

func main() {
	cli.Add(runcmd.Command())
	os.Exit(cli.Main("suitegen", os.Args[1:]))
}
