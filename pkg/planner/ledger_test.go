package planner_test

import (
	"github.com/suitegen/suitegen/pkg/canvas"
	"github.com/suitegen/suitegen/pkg/canvas/canvastest"
	"github.com/suitegen/suitegen/pkg/planner"
)

// The planner's ledger is the canvas ledger; its tests run on canvastest's,
// which pkg/canvas/canvastest holds to the same behaviours.
var (
	_ planner.Ledger = (*canvas.Store)(nil)
	_ planner.Ledger = (*canvastest.Ledger)(nil)
)
