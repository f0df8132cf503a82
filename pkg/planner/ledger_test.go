package planner_test

import (
	"github.com/suitegen/suitegen/pkg/ledger"
	"github.com/suitegen/suitegen/pkg/ledger/ledgertest"
	"github.com/suitegen/suitegen/pkg/planner"
)

// The planner's ledger is pkg/ledger's; its tests run on ledgertest's,
// which pkg/ledger/ledgertest holds to the same behaviours.
var (
	_ planner.Ledger = (*ledger.Store)(nil)
	_ planner.Ledger = (*ledgertest.Ledger)(nil)
)
