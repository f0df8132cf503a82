// Command suitegen: see 'suitegen help' and the README.
package main

import (
	"os"

	"github.com/suitegen/suitegen/pkg/cli"
)

func main() { os.Exit(cli.Main("suitegen", os.Args[1:])) }
