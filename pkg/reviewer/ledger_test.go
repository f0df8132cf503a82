package reviewer_test

import (
	"github.com/suitegen/suitegen/pkg/canvas"
	"github.com/suitegen/suitegen/pkg/canvas/canvastest"
	"github.com/suitegen/suitegen/pkg/reviewer"
)

// A review reads the suite from the canvas ledger, or from canvastest's,
// which pkg/canvas/canvastest holds to the same behaviours.
var (
	_ reviewer.Suite = (*canvas.Store)(nil)
	_ reviewer.Suite = (*canvastest.Ledger)(nil)
)
