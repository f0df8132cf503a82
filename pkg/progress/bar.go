package progress

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/suitegen/suitegen/pkg/ledger"
)

// Snapshot is what the bar draws at one moment.
type Snapshot struct {
	Proved, Asked int
	// ByUseCase, when set, adds one line per use case under the bar.
	ByUseCase []UseCaseProgress
}

// UseCaseProgress is one use case's share of the work.
type UseCaseProgress struct {
	UseCase    string
	Done, Want int
}

// Poller reads a run's snapshot from the ledger; perUseCase adds ByUseCase.
func Poller(store *ledger.Store, run string, perUseCase bool) func(context.Context) (Snapshot, error) {
	return func(ctx context.Context) (Snapshot, error) {
		if !perUseCase {
			r, err := store.Run(ctx, run)
			if err != nil {
				return Snapshot{}, err
			}
			n, err := store.Count(ctx, run)
			return Snapshot{Proved: n, Asked: r.Asked}, err
		}
		d, err := Detail(ctx, store, run, DefaultStallAfter)
		if err != nil {
			return Snapshot{}, err
		}
		s := Snapshot{Proved: d.Proved, Asked: d.Asked}
		for _, u := range d.UseCases {
			s.ByUseCase = append(s.ByUseCase, UseCaseProgress{UseCase: u.UseCase, Done: u.Done, Want: u.Want})
		}
		return s, nil
	}
}

const barWidth = 30

// Bar draws progress until ctx ends, polling every interval. On a terminal
// (isTTY) it keeps a live block at the bottom (beneath any other Bar's), e.g.
//
//	proved 120/300 [===========>                  ] 40%  12.3/s  ETA 0:15
//
// with per-use-case lines beneath when the snapshot has them, through a
// Terminal: pass the Terminal the logger writes to, and log lines appear
// above the block instead of through it (any other writer gets a Terminal
// of its own). Otherwise it prints one plain line per poll, so the caller
// picks every: a fraction of a second on a terminal, a few seconds for logs.
// When ctx ends it polls once more and prints a final line.
func Bar(ctx context.Context, w io.Writer, isTTY bool, poll func(context.Context) (Snapshot, error), every time.Duration) {
	if every <= 0 {
		every = time.Second
	}
	t, ok := w.(*Terminal)
	if !ok || t.TTY() != isTTY {
		t = NewTerminal(w, isTTY)
	}
	b := &bar{t: t, blk: t.Block(), tty: isTTY, start: time.Now()}
	tick := time.NewTicker(every)
	defer tick.Stop()
	b.step(ctx, poll, time.Now(), false)
	for {
		select {
		case <-ctx.Done():
		case now := <-tick.C:
			if ctx.Err() == nil {
				b.step(ctx, poll, now, false)
				continue
			}
		}
		// A last look with a short deadline of its own: ctx is over.
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		b.step(fctx, poll, time.Now(), true)
		cancel()
		return
	}
}

type sample struct {
	at     time.Time
	proved int
}

type bar struct {
	t       *Terminal
	blk     *Block
	tty     bool
	start   time.Time
	last    Snapshot
	have    bool
	samples []sample // recent, for the rate
}

// step polls and draws; the final step always leaves a finished line, from
// the last good snapshot when this poll fails.
func (b *bar) step(ctx context.Context, poll func(context.Context) (Snapshot, error), now time.Time, final bool) {
	s, err := poll(ctx)
	if err != nil {
		// On a terminal a failed poll leaves the block as it was (the next
		// one redraws it); the final one, or any off a terminal, says why.
		if !b.tty || final {
			fmt.Fprintf(b.t, "progress: %v\n", err)
		}
		if final {
			b.draw(true)
		}
		return
	}
	b.last, b.have = s, true
	b.samples = append(b.samples, sample{now, s.Proved})
	// Rate over the last ~30 s: recent enough to react, long enough to be smooth.
	for len(b.samples) > 2 && now.Sub(b.samples[0].at) > 30*time.Second {
		b.samples = b.samples[1:]
	}
	b.draw(final)
}

func (b *bar) rate() float64 {
	if len(b.samples) < 2 {
		return 0
	}
	first, last := b.samples[0], b.samples[len(b.samples)-1]
	dt := last.at.Sub(first.at).Seconds()
	if dt <= 0 || last.proved < first.proved {
		return 0
	}
	return float64(last.proved-first.proved) / dt
}

func (b *bar) draw(final bool) {
	if !b.have {
		if final {
			b.blk.Finish(nil)
		}
		return
	}
	lines := Lines(b.last, b.rate())
	switch {
	case !b.tty && final:
		lines[0] = "final: " + lines[0]
		b.blk.Finish(lines)
	case final:
		b.blk.Finish(lines)
	default:
		b.blk.Set(lines)
	}
}

// Lines renders a snapshot: the bar line, then one line per use case.
func Lines(s Snapshot, rate float64) []string {
	share := fraction(s.Proved, s.Asked)
	line := fmt.Sprintf("proved %d/%d %s %.0f%%  %.1f/s  ETA %s", s.Proved, s.Asked, drawBar(share, barWidth), share*100, rate, eta(s, rate))
	out := []string{line}
	width := 0
	for _, u := range s.ByUseCase {
		width = max(width, len(u.UseCase))
	}
	for _, u := range s.ByUseCase {
		f := fraction(u.Done, u.Want)
		out = append(out, fmt.Sprintf("  %-*s %d/%d %s %.0f%%", width, u.UseCase, u.Done, u.Want, drawBar(f, barWidth/2), f*100))
	}
	return out
}

func fraction(done, want int) float64 {
	if want <= 0 {
		return 0
	}
	return min(1, float64(done)/float64(want))
}

// drawBar is "[====>    ]" with width cells inside the brackets.
func drawBar(f float64, width int) string {
	full := int(f * float64(width))
	if full >= width {
		return "[" + strings.Repeat("=", width) + "]"
	}
	return "[" + strings.Repeat("=", full) + ">" + strings.Repeat(" ", width-full-1) + "]"
}

func eta(s Snapshot, rate float64) string {
	left := s.Asked - s.Proved
	if left <= 0 {
		return "0:00"
	}
	if rate <= 0 {
		return "--:--"
	}
	d := time.Duration(float64(left) / rate * float64(time.Second)).Round(time.Second)
	h, m, sec := int(d.Hours()), int(d.Minutes())%60, int(d.Seconds())%60
	if h > 0 {
		return fmt.Sprintf("%d:%02d:%02d", h, m, sec)
	}
	return fmt.Sprintf("%d:%02d", m, sec)
}
