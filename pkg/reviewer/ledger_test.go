package reviewer_test

import (
	"github.com/suitegen/suitegen/pkg/canvas"
	"github.com/suitegen/suitegen/pkg/canvas/canvastest"
	"github.com/suitegen/suitegen/pkg/reviewer"
)

// A reviewer reads the suite from, and concludes its run in, the canvas
// ledger; its tests run on canvastest's, which pkg/canvas/canvastest holds
// to the same behaviours.
var (
	_ reviewer.Ledger = (*canvas.Store)(nil)
	_ reviewer.Ledger = (*canvastest.Ledger)(nil)
	_ reviewer.Suite  = (*canvas.Store)(nil)
	_ reviewer.Suite  = (*canvastest.Ledger)(nil)
)
