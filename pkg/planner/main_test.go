package planner

import (
	"testing"

	"github.com/suitegen/suitegen/pkg/testenv"
)

// Some tests run the planner on a ledger in PostgreSQL.
func TestMain(m *testing.M) { testenv.Main(m) }
