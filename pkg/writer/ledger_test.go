package writer_test

import (
	"github.com/suitegen/suitegen/pkg/canvas"
	"github.com/suitegen/suitegen/pkg/canvas/canvastest"
	"github.com/suitegen/suitegen/pkg/engine"
	"github.com/suitegen/suitegen/pkg/writer"
)

// The writer's ledger is the canvas ledger; its tests run on canvastest's,
// which pkg/canvas/canvastest holds to the same behaviours. The ledger is
// also where an engine cache finds a contract's files.
var (
	_ writer.Ledger    = (*canvas.Store)(nil)
	_ writer.Ledger    = (*canvastest.Ledger)(nil)
	_ engine.Contracts = (*canvas.Store)(nil)
	_ engine.Contracts = (*canvastest.Ledger)(nil)
)
