package writer_test

import (
	"github.com/suitegen/suitegen/pkg/engine"
	"github.com/suitegen/suitegen/pkg/ledger"
	"github.com/suitegen/suitegen/pkg/ledger/ledgertest"
	"github.com/suitegen/suitegen/pkg/writer"
)

// The writer's ledger is the canvas ledger; its tests run on ledgertest's,
// which pkg/ledger/ledgertest holds to the same behaviours. The ledger is
// also where an engine cache finds a contract's files.
var (
	_ writer.Ledger    = (*ledger.Store)(nil)
	_ writer.Ledger    = (*ledgertest.Ledger)(nil)
	_ engine.Contracts = (*ledger.Store)(nil)
	_ engine.Contracts = (*ledgertest.Ledger)(nil)
)
