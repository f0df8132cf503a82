package writer

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/suitegen/suitegen/pkg/brief"
	"github.com/suitegen/suitegen/pkg/ledger"
	"github.com/suitegen/suitegen/pkg/model"
	"github.com/suitegen/suitegen/pkg/plan"
	"github.com/suitegen/suitegen/pkg/queue"
)

func discardLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// TestHandleMatrix: how a delivery ends for every way its work can end —
// acked after the ledger records it done, released for redelivery (with the
// delay that fits), dead-lettered on its last delivery (recorded dead, then
// terminated), or dropped without touching the ledger.
func TestHandleMatrix(t *testing.T) {
	engineDown := errors.New("engine: world unreachable")
	badKey := &model.ConfigError{Kind: model.KindAuth, Status: 401, Message: "invalid api key", Fix: "set OPENAI_API_KEY"}
	tooLarge := &model.ConfigError{Kind: model.KindQuotaTooSmall, Message: "the request needs more than the quota admits"}
	for _, c := range []struct {
		name    string
		replies []any
		setup   func(h *harness)
		run     string
		last    bool
		ends    []string          // how the delivery was finished
		state   ledger.SliceState // the slice in the ledger afterwards ("" untouched)
		reason  string            // substring of the ledger's reason
		calls   int               // model calls made
	}{
		{name: "written", replies: []any{brief.ToolFinish}, run: "r",
			ends: []string{"ack"}, state: ledger.SliceDone, calls: 1},
		{name: "nothing outstanding", run: "r", setup: func(h *harness) {
			for _, id := range []string{"b0", "b1"} {
				if err := h.ledger.Credit(context.Background(), "r", id, 2); err != nil {
					panic(err)
				}
			}
		}, ends: []string{"ack"}, state: ledger.SliceDone},
		{name: "ledger refuses the finish", replies: []any{brief.ToolFinish}, run: "r",
			setup: func(h *harness) { h.ledger.Fail("FinishSlice", -1, errors.New("ledger down")) },
			ends:  []string{"nak 1s"}, calls: 1},
		{name: "unknown run", run: "nobody", ends: []string{"term writer: unknown run \"nobody\""}},
		{name: "run already done", run: "r", setup: func(h *harness) { h.setState("r", ledger.RunDone) },
			ends: []string{"term writer: run r is done"}},
		{name: "run failed", run: "r", last: true, setup: func(h *harness) { h.setState("r", ledger.RunFailed) },
			ends: []string{"term writer: run r is failed"}},
		{name: "run of another model", run: "r", setup: func(h *harness) { h.setModel("r", "gpt-x") },
			ends: []string{"nak 7s"}},
		{name: "run of another model, last delivery", run: "r", last: true, setup: func(h *harness) { h.setModel("r", "gpt-x") },
			ends: []string{"term writer: run r is written with model gpt-x; this writer drives m"}, state: ledger.SliceDead, reason: "model gpt-x"},
		{name: "engine fails", run: "r", setup: func(h *harness) { h.w.cfg.Engines = fakeEngines{err: engineDown} },
			ends: []string{"nak 2s"}},
		{name: "engine fails on the last delivery", run: "r", last: true, setup: func(h *harness) { h.w.cfg.Engines = fakeEngines{err: engineDown} },
			ends: []string{"term engine: engine: world unreachable"}, state: ledger.SliceDead, reason: "world unreachable"},
		{name: "dead, but the ledger cannot record it", run: "r", last: true, setup: func(h *harness) {
			h.w.cfg.Engines = fakeEngines{err: engineDown}
			h.ledger.Fail("FinishSlice", -1, errors.New("ledger down"))
		}, ends: []string{"nak 1s"}},
		{name: "dead, but another writer finished it first", run: "r", last: true, setup: func(h *harness) {
			h.w.cfg.Engines = fakeEngines{err: engineDown, meanwhile: func() { h.ledger.finish("r", "s1", ledger.SliceDone) }}
		}, ends: []string{"term engine: engine: world unreachable"}, state: ledger.SliceDone},
		// An earlier delivery committed the slice and lost its ack: acked,
		// with no session, even where its buckets are short, and never dead
		// on the last delivery.
		{name: "already done in the ledger", run: "r", setup: func(h *harness) { h.ledger.finish("r", "s1", ledger.SliceDone) },
			ends: []string{"ack"}, state: ledger.SliceDone},
		{name: "already done in the ledger, last delivery", run: "r", last: true,
			setup: func(h *harness) { h.ledger.finish("r", "s1", ledger.SliceDone) },
			ends:  []string{"ack"}, state: ledger.SliceDone},
		{name: "a bucket the run does not have", run: "r", setup: func(h *harness) { h.buckets = []string{"b0", "b9"} },
			ends: []string{"nak 2s"}},
		// A bucket whose templates ask about whose record otherwise: no
		// brief carries it, on any writer, so the first delivery ends it.
		{name: "a bucket no brief can carry", run: "r", setup: func(h *harness) {
			b := ledger.Bucket{Bucket: plan.Bucket{ID: "b2", Ord: 2, UseCase: "cancel-order", Cell: "cancel-order", Outcome: "succeed", Overlay: "none", Kind: "happy", Want: 2,
				Spec: plan.Spec{Templates: []string{"t1", "t2"}, Choices: map[string]plan.Choice{"t2": {Outside: "orders"}}, Capacity: 2, Sized: 2}}, Origin: ledger.OriginPlan}
			if err := h.ledger.PutBuckets(context.Background(), "r", []ledger.Bucket{b}); err != nil {
				panic(err)
			}
			h.buckets = []string{"b0", "b2"}
		}, ends: []string{`term the slice's brief cannot be made (any writer would fail it the same way): brief s1: json: error calling MarshalJSON for type brief.Bucket: bucket b2: templates take records from outside "" ("") and "orders" (""), leaving out "" and ""`},
			state: ledger.SliceDead, reason: "brief cannot be made"},
		{name: "model keeps answering in prose", replies: []any{"prose", "prose", "prose", "prose"}, run: "r",
			ends: []string{"nak 2s"}, calls: 4},
		{name: "budget reached ends the slice as written", run: "r", setup: func(h *harness) {
			h.setBudget("r", 100)
			h.ledger.spend(ledger.Call{Prompt: 100})
		}, ends: []string{"ack"}, state: ledger.SliceDone},
		{name: "dollar budget reached ends the slice as written", run: "r", setup: func(h *harness) {
			h.ledger.update("r", func(r *ledger.Run) { r.BudgetUSD = 0.5 })
			h.ledger.spend(ledger.Call{CostUSD: 0.5, Priced: true})
		}, ends: []string{"ack"}, state: ledger.SliceDone},
		{name: "provider refuses the configuration", replies: []any{badKey}, run: "r",
			ends: []string{"nak 30s"}, calls: 1},
		{name: "provider refuses the configuration on the last delivery", replies: []any{badKey}, run: "r", last: true,
			ends: []string{"nak 30s"}, calls: 1},
		{name: "a request the quota can never admit, mid-session", replies: []any{"prose", tooLarge}, run: "r",
			ends: []string{"ack"}, state: ledger.SliceDone, calls: 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, c.replies...)
			if c.setup != nil {
				c.setup(h)
			}
			d := h.delivery(c.run, 2, c.last)
			h.w.handle(t.Context(), d)
			if got := d.ends(); !slices.Equal(got, c.ends) {
				t.Errorf("finished with %q, want %q", got, c.ends)
			}
			state, reason := h.ledger.state(c.run, "s1")
			if state != c.state || !strings.Contains(reason, c.reason) {
				t.Errorf("ledger: slice %q with reason %q, want %q with %q", state, reason, c.state, c.reason)
			}
			if n := h.model.made(); n != c.calls {
				t.Errorf("%d model calls, want %d", n, c.calls)
			}
			if d.beats != 1 {
				t.Errorf("%d heartbeats started, want 1", d.beats)
			}
		})
	}
}

// TestHandleReleasesOnShutdown: a writer told to stop mid-slice gives the
// slice its drain period, then releases it at once for another writer,
// without recording anything.
func TestHandleReleasesOnShutdown(t *testing.T) {
	h := newHarness(t, "block")
	ctx, cancel := context.WithCancel(t.Context())
	d := h.delivery("r", 1, false)
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.w.handle(ctx, d)
	}()
	for h.model.made() == 0 {
		time.Sleep(time.Millisecond)
	}
	cancel()
	<-done
	if got := d.ends(); !slices.Equal(got, []string{"nak 0s"}) {
		t.Errorf("finished with %q, want an immediate release", got)
	}
	if state, _ := h.ledger.state("r", "s1"); state != "" {
		t.Errorf("the ledger recorded the released slice %s", state)
	}
}

// TestRunStopsOnRefusal: once the provider refuses the writer's
// configuration, Run returns that error and takes no more slices.
func TestRunStopsOnRefusal(t *testing.T) {
	badKey := &model.ConfigError{Kind: model.KindAuth, Status: 401, Message: "invalid api key"}
	h := newHarness(t, badKey)
	d1, d2 := h.delivery("r", 1, false), h.delivery("r", 1, false)
	fetched := 0
	h.w.cfg.Slices = SourceFunc(func(ctx context.Context) (Delivery, error) {
		fetched++
		if fetched == 1 {
			return d1, nil
		}
		return d2, nil
	})
	err := h.w.Run(t.Context())
	if ce, ok := model.IsFatal(err); !ok || ce.Kind != model.KindAuth {
		t.Fatalf("Run returned %v, want the provider's refusal", err)
	}
	if got := d1.ends(); !slices.Equal(got, []string{"nak 30s"}) {
		t.Errorf("the refused slice finished with %q, want a release", got)
	}
	if got := d2.ends(); len(got) != 0 || fetched != 1 {
		t.Errorf("after the refusal: %d fetches, the next slice finished with %q", fetched, got)
	}
}

// TestRunSkipsBadMessages: a message that is not a slice is skipped and the
// next delivery handled; Run returns when its context ends.
func TestRunSkipsBadMessages(t *testing.T) {
	h := newHarness(t)
	ctx, cancel := context.WithCancel(t.Context())
	d := h.delivery("r", 1, false)
	calls := 0
	h.w.cfg.Slices = SourceFunc(func(ctx context.Context) (Delivery, error) {
		calls++
		switch calls {
		case 1:
			return nil, &badMessage
		case 2:
			return d, nil
		}
		cancel()
		<-ctx.Done()
		return nil, ctx.Err()
	})
	if err := h.w.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if got := d.ends(); !slices.Equal(got, []string{"ack"}) || calls != 3 {
		t.Fatalf("after a bad message: %q, %d fetches", got, calls)
	}
}

var badMessage = queue.BadMessageError{StreamSeq: 9, Subject: "suitegen.slices.r", Err: errors.New("not a slice")}

func (h *harness) setState(run string, s ledger.RunState) {
	h.ledger.update(run, func(r *ledger.Run) { r.State = s })
}

func (h *harness) setModel(run, m string) {
	h.ledger.update(run, func(r *ledger.Run) { r.Model = m })
}

func (h *harness) setBudget(run string, tokens int64) {
	h.ledger.update(run, func(r *ledger.Run) { r.BudgetTokens = tokens })
}
