package progress_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/suitegen/suitegen/pkg/progress"
	"github.com/suitegen/suitegen/pkg/testenv"
)

// emulate plays terminal output on a screen of unbounded height and returns
// its rows: printable runes, \n (to the next row's start, as a terminal in
// its usual mode does), \r, ESC[nA (up), ESC[J (clear to the end of the
// screen) and ESC[K (clear to the end of the row). Any other control
// sequence fails the test.
func emulate(t *testing.T, out string) []string {
	t.Helper()
	rows := [][]rune{{}}
	row, col := 0, 0
	put := func(r rune) {
		for len(rows[row]) < col {
			rows[row] = append(rows[row], ' ')
		}
		if col < len(rows[row]) {
			rows[row][col] = r
		} else {
			rows[row] = append(rows[row], r)
		}
		col++
	}
	for i := 0; i < len(out); {
		switch out[i] {
		case '\n':
			row, col = row+1, 0
			if row == len(rows) {
				rows = append(rows, []rune{})
			}
			i++
			continue
		case '\r':
			col = 0
			i++
			continue
		case 0x1b:
			j := i + 2
			for j < len(out) && out[j] >= '0' && out[j] <= '9' {
				j++
			}
			if i+1 >= len(out) || out[i+1] != '[' || j >= len(out) {
				t.Fatalf("bad escape at %d: %q", i, out[i:])
			}
			n := 1
			if j > i+2 {
				n, _ = strconv.Atoi(out[i+2 : j])
			}
			switch out[j] {
			case 'A':
				row = max(0, row-n)
			case 'J':
				if col < len(rows[row]) {
					rows[row] = rows[row][:col]
				}
				rows = rows[:row+1]
			case 'K':
				if col < len(rows[row]) {
					rows[row] = rows[row][:col]
				}
			default:
				t.Fatalf("unexpected escape %q", out[i:j+1])
			}
			i = j + 1
			continue
		}
		r, size := utf8.DecodeRuneInString(out[i:])
		if r < 0x20 {
			t.Fatalf("unexpected control %q at %d", r, i)
		}
		put(r)
		i += size
	}
	var lines []string
	for _, r := range rows {
		lines = append(lines, string(r))
	}
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// TestLogsAboveBar: a logger and the bar share a Terminal; whatever the
// interleaving, the screen ends with every log line whole, once and in
// order, and the final bar beneath them: no bar cut into a log line, no
// log line overwritten by a redraw.
func TestLogsAboveBar(t *testing.T) {
	var out testenv.Buffer
	term := progress.NewTerminal(&out, true)
	log := slog.New(slog.NewTextHandler(term, &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}}))
	ctx, cancel := context.WithCancel(context.Background())
	var mu sync.Mutex
	proved := 0
	poll := func(context.Context) (progress.Snapshot, error) {
		mu.Lock()
		defer mu.Unlock()
		return progress.Snapshot{Proved: proved, Asked: 200, ByUseCase: []progress.UseCaseProgress{{"cancel", proved / 2, 100}}}, nil
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		progress.Bar(ctx, term, true, poll, time.Millisecond)
	}()
	const n = 300
	for i := range n {
		mu.Lock()
		proved = min(200, i)
		mu.Unlock()
		log.Info("slice written", "i", i, "slice", fmt.Sprintf("s-%03d", i))
		if i%50 == 0 {
			time.Sleep(5 * time.Millisecond) // let the bar redraw between bursts
		}
	}
	mu.Lock()
	proved = 200
	mu.Unlock()
	cancel()
	<-done
	screen := emulate(t, out.String())
	if len(screen) != n+2 {
		t.Fatalf("screen has %d rows, want %d log lines and the 2-row bar:\n%s", len(screen), n, strings.Join(screen, "\n"))
	}
	for i := range n {
		want := fmt.Sprintf("level=INFO msg=\"slice written\" i=%d slice=s-%03d", i, i)
		if screen[i] != want {
			t.Fatalf("row %d = %q, want %q", i, screen[i], want)
		}
	}
	if !strings.HasPrefix(screen[n], "proved 200/200 [") || !strings.HasPrefix(screen[n+1], "  cancel 100/100") {
		t.Fatalf("bar rows: %q", screen[n:])
	}
	if !strings.Contains(out.String(), "\x1b[J") {
		t.Fatal("the bar was never redrawn while logging: the test exercised nothing")
	}
}

// Off a terminal there is no block: status lines and log lines are whole
// lines, each written at once.
func TestTerminalPlain(t *testing.T) {
	var out bytes.Buffer
	term := progress.NewTerminal(&out, false)
	b := term.Block()
	b.Set([]string{"proved 1/2"})
	fmt.Fprintln(term, "a log line")
	b.Finish([]string{"final: proved 2/2"})
	if got := out.String(); got != "proved 1/2\na log line\nfinal: proved 2/2\n" {
		t.Fatalf("plain output %q", got)
	}
}

// A log write that does not end its line holds the block back until the
// line ends, and a block line wider than the window is cut.
func TestTerminalPartialLine(t *testing.T) {
	var out bytes.Buffer
	term := progress.NewTerminal(&out, true)
	b := term.Block()
	b.Set([]string{"bar 1"})
	fmt.Fprint(term, "half ")
	b.Set([]string{"bar 2"})
	fmt.Fprint(term, "a line\n")
	b.Finish([]string{"bar 3"})
	screen := emulate(t, out.String())
	if strings.Join(screen, "|") != "half a line|bar 3" {
		t.Fatalf("screen %q from %q", screen, out.String())
	}
}

// A block wider or taller than the window is cut to it, so no redraw leaves
// a wrapped or scrolled row behind.
func TestTerminalFitsWindow(t *testing.T) {
	var out bytes.Buffer
	term := progress.NewTerminal(&out, true)
	progress.SetSize(term, 20, 4)
	b := term.Block()
	b.Set([]string{strings.Repeat("x", 50), "b", "c", "d", "e", "f"})
	b.Set([]string{"short"})
	screen := emulate(t, out.String())
	if len(screen) != 1 || screen[0] != "short" {
		t.Fatalf("screen after a redraw: %q", screen)
	}
	out.Reset()
	b.Set([]string{strings.Repeat("x", 50), "b", "c", "d", "e", "f"})
	screen = emulate(t, out.String())
	if len(screen) != 3 || screen[0] != strings.Repeat("x", 19) || screen[1] != "b" || screen[2] != "  … 4 more lines" {
		t.Fatalf("cut block: %q", screen)
	}
}

// Two runs' bars share the terminal: both blocks stay live beneath the logs,
// the first to finish is left above the other, and a bar started after
// another finished draws again.
func TestTerminalBlocks(t *testing.T) {
	var out bytes.Buffer
	term := progress.NewTerminal(&out, true)
	a, b := term.Block(), term.Block()
	a.Set([]string{"run a 1/10"})
	b.Set([]string{"run b 1/20"})
	fmt.Fprintln(term, "a log line")
	a.Set([]string{"run a 2/10"})
	if got := emulate(t, out.String()); strings.Join(got, "|") != "a log line|run a 2/10|run b 1/20" {
		t.Fatalf("two live blocks: %q", got)
	}
	a.Finish([]string{"run a 10/10"})
	b.Set([]string{"run b 5/20"})
	fmt.Fprintln(term, "another")
	if got := emulate(t, out.String()); strings.Join(got, "|") != "a log line|run a 10/10|another|run b 5/20" {
		t.Fatalf("after a finished: %q", got)
	}
	b.Finish([]string{"run b 20/20"})
	c := term.Block()
	c.Set([]string{"run c 0/5"})
	if got := emulate(t, out.String()); strings.Join(got, "|") != "a log line|run a 10/10|another|run b 20/20|run c 0/5" {
		t.Fatalf("a bar after the others: %q", got)
	}
}
