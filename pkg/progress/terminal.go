package progress

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"unicode/utf8"
)

// Terminal is one output shared by log lines and a live status block (the
// progress bar), so the two never overwrite or cut into each other. On a
// terminal the block stays at the bottom: a log write erases it, writes its
// lines, and draws it again beneath them. Elsewhere (a pipe, a file, a
// container's log) there is no block: every write goes out whole, one at a
// time, so a progress line and a log line never mix mid-line.
//
// Give the same Terminal to the logger (as its io.Writer) and to Bar.
type Terminal struct {
	w    io.Writer
	tty  bool
	size func() (cols, rows int) // the window, zeros when unknown

	mu      sync.Mutex
	status  []string // the block, as last set
	drawn   int      // rows of the block on screen now
	midLine bool     // the last log write did not end its line
	done    bool     // Finish was called: no block any more
}

// NewTerminal wraps w; tty says whether w is a terminal that understands
// cursor movement (ANSI). On an *os.File terminal the block is cut to the
// window, so a long line cannot wrap and a tall block cannot scroll, either
// of which would leave rows the next redraw cannot reach.
func NewTerminal(w io.Writer, tty bool) *Terminal {
	t := &Terminal{w: w, tty: tty, size: func() (int, int) { return 0, 0 }}
	if f, ok := w.(*os.File); ok && tty {
		t.size = func() (int, int) { return size(f) }
	}
	return t
}

// TTY reports whether the terminal draws a live block.
func (t *Terminal) TTY() bool { return t.tty }

// Write writes log output. On a terminal it goes above the status block.
func (t *Terminal) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.tty {
		return t.w.Write(p)
	}
	var buf bytes.Buffer
	t.erase(&buf)
	buf.Write(p)
	t.midLine = len(p) > 0 && p[len(p)-1] != '\n' || len(p) == 0 && t.midLine
	if !t.midLine {
		t.draw(&buf)
	}
	if _, err := t.w.Write(buf.Bytes()); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Status replaces the block with lines. Off a terminal it writes them once,
// as plain lines.
func (t *Terminal) Status(lines []string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.tty {
		io.WriteString(t.w, strings.Join(lines, "\n")+"\n")
		return
	}
	if t.done {
		return
	}
	var buf bytes.Buffer
	t.erase(&buf)
	t.status = append(t.status[:0], lines...)
	t.draw(&buf)
	t.w.Write(buf.Bytes())
}

// Finish writes lines as the block's last state and leaves them on screen
// for good, ending the line; later writes go below them and no block is
// drawn again.
func (t *Terminal) Finish(lines []string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.tty {
		io.WriteString(t.w, strings.Join(lines, "\n")+"\n")
		return
	}
	var buf bytes.Buffer
	t.erase(&buf)
	t.status = append(t.status[:0], lines...)
	t.draw(&buf)
	if t.drawn > 0 {
		buf.WriteString("\n")
	}
	t.drawn, t.status, t.done = 0, nil, true
	t.w.Write(buf.Bytes())
}

// erase moves to the block's first row and clears to the end of the screen.
func (t *Terminal) erase(buf *bytes.Buffer) {
	if t.drawn == 0 {
		return
	}
	buf.WriteString("\r")
	if t.drawn > 1 {
		fmt.Fprintf(buf, "\x1b[%dA", t.drawn-1)
	}
	buf.WriteString("\x1b[J")
	t.drawn = 0
}

// draw writes the block, leaving the cursor at the end of its last row.
func (t *Terminal) draw(buf *bytes.Buffer) {
	if t.midLine || t.done || len(t.status) == 0 {
		return
	}
	cols, rows := t.size()
	lines := t.status
	if rows > 1 && len(lines) > rows-1 {
		more := len(lines) - (rows - 2)
		lines = append(lines[:rows-2:rows-2], fmt.Sprintf("  … %d more lines", more))
	}
	for i, l := range lines {
		if i > 0 {
			buf.WriteString("\n")
		}
		buf.WriteString(cut(l, cols))
	}
	t.drawn = len(lines)
}

// cut shortens l to fit in w columns (one rune a column), leaving the last
// column free so the cursor never wraps; w 0 leaves it alone.
func cut(l string, w int) string {
	if w <= 1 || utf8.RuneCountInString(l) < w {
		return l
	}
	n := 0
	for i := range l {
		if n == w-1 {
			return l[:i]
		}
		n++
	}
	return l
}
