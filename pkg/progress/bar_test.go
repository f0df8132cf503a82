package progress_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/suitegen/suitegen/pkg/progress"
)

func TestLines(t *testing.T) {
	got := progress.Lines(progress.Snapshot{Proved: 120, Asked: 300}, 12.3)
	want := "proved 120/300 [============>                 ] 40%  12.3/s  ETA 0:15"
	if len(got) != 1 || got[0] != want {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
	got = progress.Lines(progress.Snapshot{Proved: 300, Asked: 300, ByUseCase: []progress.UseCaseProgress{{"cancel-order", 5, 10}, {"track", 10, 10}}}, 0)
	want2 := []string{
		"proved 300/300 [==============================] 100%  0.0/s  ETA 0:00",
		"  cancel-order 5/10 [=======>       ] 50%",
		"  track        10/10 [===============] 100%",
	}
	if strings.Join(got, "\n") != strings.Join(want2, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want2, "\n"))
	}
	if l := progress.Lines(progress.Snapshot{Proved: 0, Asked: 500}, 0)[0]; !strings.HasSuffix(l, "ETA --:--") || !strings.Contains(l, "[>    ") {
		t.Fatalf("no rate: %q", l)
	}
	if l := progress.Lines(progress.Snapshot{Proved: 0, Asked: 7200}, 1)[0]; !strings.HasSuffix(l, "ETA 2:00:00") {
		t.Fatalf("hours: %q", l)
	}
}

// counter is a poll that proves 10 more on every call, and ends ctx after
// stop calls.
type counter struct {
	mu     sync.Mutex
	n      int
	stop   int
	cancel context.CancelFunc
	fail   bool
}

func (c *counter) poll(ctx context.Context) (progress.Snapshot, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
	if c.n == c.stop {
		c.cancel()
	}
	if c.fail && c.n == 2 {
		return progress.Snapshot{}, errors.New("ledger unreachable")
	}
	return progress.Snapshot{Proved: min(10*c.n, 100), Asked: 100}, nil
}

func TestBarPlain(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	c := &counter{stop: 4, cancel: cancel, fail: true}
	var buf bytes.Buffer
	progress.Bar(ctx, &buf, false, c.poll, 10*time.Millisecond)
	out := buf.String()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	// polls 1..4 (2 fails), then one final poll (5).
	if len(lines) != 5 || strings.Contains(out, "\r") || strings.Contains(out, "\x1b") {
		t.Fatalf("plain output:\n%s", out)
	}
	if !strings.HasPrefix(lines[0], "proved 10/100 [") || lines[1] != "progress: ledger unreachable" ||
		!strings.HasPrefix(lines[2], "proved 30/100 ") || !strings.HasPrefix(lines[4], "final: proved 50/100 [") {
		t.Fatalf("plain lines:\n%s", out)
	}
	if !strings.Contains(lines[3], "/s  ETA ") || strings.Contains(lines[3], "ETA --:--") {
		t.Fatalf("no rate after several polls: %q", lines[3])
	}
}

func TestBarTTY(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	c := &counter{stop: 3, cancel: cancel}
	var buf bytes.Buffer
	poll := func(ctx context.Context) (progress.Snapshot, error) {
		s, err := c.poll(ctx)
		s.ByUseCase = []progress.UseCaseProgress{{"a", s.Proved / 2, 50}, {"b", s.Proved - s.Proved/2, 50}}
		return s, err
	}
	progress.Bar(ctx, &buf, true, poll, 10*time.Millisecond)
	out := buf.String()
	if !strings.HasPrefix(out, "proved 10/100 [") || !strings.HasSuffix(out, "\n") {
		t.Fatalf("tty output: %q", out)
	}
	// Each redraw after the first goes back over the three rows of the block
	// and clears them.
	if n := strings.Count(out, "\r\x1b[2A\x1b[J"); n != 3 {
		t.Fatalf("redraws: %d in %q", n, out)
	}
	// What is left on screen is the final block, once.
	screen := emulate(t, out)
	want := []string{"proved 40/100 [============>                 ] 40%", "  a 20/50 [======>        ] 40%", "  b 20/50 [======>        ] 40%"}
	if len(screen) != 3 || !strings.HasPrefix(screen[0], want[0]) || screen[1] != want[1] || screen[2] != want[2] {
		t.Fatalf("screen:\n%s", strings.Join(screen, "\n"))
	}
}
