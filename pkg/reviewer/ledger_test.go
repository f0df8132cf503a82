package reviewer_test

import (
	"github.com/suitegen/suitegen/pkg/ledger"
	"github.com/suitegen/suitegen/pkg/ledger/ledgertest"
	"github.com/suitegen/suitegen/pkg/reviewer"
)

// A reviewer reads the suite from, and concludes its run in, the canvas
// ledger; its tests run on ledgertest's, which pkg/ledger/ledgertest holds
// to the same behaviours.
var (
	_ reviewer.Ledger = (*ledger.Store)(nil)
	_ reviewer.Ledger = (*ledgertest.Ledger)(nil)
)
