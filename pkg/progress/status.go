package progress

import (
	"math"
	"time"

	"github.com/suitegen/suitegen/pkg/ledger"
)

// DefaultStallAfter is how long an unfinished run may go without ledger
// activity before it is shown stalled.
const DefaultStallAfter = 10 * time.Minute

// StatusStalled is the status of an unfinished run with no ledger activity
// for the stall period: no scenario journalled, no refusal or model call
// recorded, no slice dealt or finished. A working writer records every model
// call, so whatever its state says, its processes died or were stopped, or
// none can work (a provider refusing every call); a run resumed with --run
// moves again and leaves it.
const StatusStalled = "stalled"

// rateWindow is the window of a run's current throughput: recent enough to
// react, long enough to be smooth.
const rateWindow = 5 * time.Minute

// RunSummary is one entry of GET /api/runs: what the run list shows.
type RunSummary struct {
	ID      string `json:"id"`
	Agent   string `json:"agent"`
	Model   string `json:"model"`
	State   string `json:"state"`
	Message string `json:"message,omitempty"`
	// Status is State, or StatusStalled for an unfinished run idle longer
	// than the stall period.
	Status     string     `json:"status"`
	Asked      int        `json:"asked"`
	Proved     int        `json:"proved"`
	Round      int        `json:"round"`
	CreatedAt  time.Time  `json:"created_at"`
	FinishedAt *time.Time `json:"finished_at,omitempty"`
	// LastActivity is the run's latest ledger write. Elapsed and idle time
	// are left to the reader (against the response's Date), so an answer
	// changes only when the run does and its ETag holds in between.
	LastActivity time.Time `json:"last_activity"`
	// RatePerMinute is scenarios proved per minute over the last five
	// minutes (a younger run: its life to its last activity), to 0.1.
	RatePerMinute float64 `json:"rate_per_minute"`
	// ETASeconds is the time left at RatePerMinute; absent when the run is
	// over, stalled or not proving.
	ETASeconds   *float64 `json:"eta_seconds,omitempty"`
	Dead         int      `json:"dead"`
	Refused      int      `json:"refused"`
	BudgetTokens int64    `json:"budget_tokens"`
	SpentTokens  int64    `json:"spent_tokens"`
	// BudgetUSD is the run's dollar cap (0: none); SpentUSD what it spent at
	// its model's price.
	BudgetUSD float64 `json:"budget_usd"`
	SpentUSD  float64 `json:"spent_usd"`
}

// Summarize turns a run's ledger figures into what the page shows.
func Summarize(r ledger.RunStats, stallAfter time.Duration) RunSummary {
	s := RunSummary{ID: r.ID, Agent: r.Agent, Model: r.Model, State: string(r.State), Message: r.Message, Status: string(r.State),
		Asked: r.Asked, Proved: r.Proved, Round: r.Round, CreatedAt: r.CreatedAt, FinishedAt: r.FinishedAt,
		LastActivity: r.LastActivity, Dead: r.Slices[string(ledger.SliceDead)],
		BudgetTokens: r.BudgetTokens, SpentTokens: r.PromptTokens + r.CompletionTokens, BudgetUSD: r.BudgetUSD, SpentUSD: r.CostUSD}
	for _, n := range r.Refusals {
		s.Refused += n
	}
	final := !r.State.Live()
	if !final && stallAfter > 0 && r.Idle() > stallAfter {
		s.Status = StatusStalled
	}
	// The window is the last five minutes; a younger run's is its active
	// life so far (to its last activity, at least 30 s), so the rate is read
	// from the ledger alone and an idle run's answer does not change with
	// the clock (its ETag holds).
	window := rateWindow
	if r.At.Sub(r.CreatedAt) < rateWindow {
		window = max(30*time.Second, r.LastActivity.Sub(r.CreatedAt))
	}
	if !final {
		s.RatePerMinute = math.Round(float64(r.ProvedRecent)/window.Minutes()*10) / 10
	}
	if left := r.Asked - r.Proved; s.Status != StatusStalled && !final && left > 0 && s.RatePerMinute > 0 {
		eta := math.Round(float64(left) / s.RatePerMinute * 60)
		s.ETASeconds = &eta
	}
	return s
}
