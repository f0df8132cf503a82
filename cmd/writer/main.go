// Command writer: see 'suitegen help' and the README.
package main

import (
	"os"

	"github.com/suitegen/suitegen/pkg/cli"
)

func main() { os.Exit(cli.Main("writer", os.Args[1:])) }
