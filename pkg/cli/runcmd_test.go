package cli_test

import (
	"github.com/suitegen/suitegen/pkg/cli"
	"github.com/suitegen/suitegen/pkg/runcmd"
)

// `suitegen run` is added by cmd/suitegen (its package imports this one);
// this package's tests drive it as the binary does.
func init() { cli.Add(runcmd.Command()); cli.Add(runcmd.Revise()) }
