// Command reviewer: see 'suitegen help' and the README.
package main

import (
	"os"

	"github.com/suitegen/suitegen/pkg/cli"
)

func main() { os.Exit(cli.Main("reviewer", os.Args[1:])) }
