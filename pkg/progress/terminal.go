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

// Terminal is one output shared by log lines and live status blocks (progress
// bars), so the two never overwrite or cut into each other. On a terminal the
// blocks stay at the bottom: a log write erases them, writes its lines, and
// draws them again beneath. Elsewhere (a pipe, a file, a container's log)
// there are no live blocks: every write goes out whole, one at a time, so a
// progress line and a log line never mix mid-line.
//
// Give the same Terminal to the logger (as its io.Writer) and to Bar.
type Terminal struct {
	w    io.Writer
	tty  bool
	size func() (cols, rows int) // the window, zeros when unknown

	mu      sync.Mutex
	blocks  []*Block // live, drawn in the order they were made
	drawn   int      // rows of blocks on screen now
	midLine bool     // the last log write did not end its line
}

// NewTerminal wraps w; tty says whether w is a terminal that understands
// cursor movement (ANSI). On an *os.File terminal the blocks are cut to the
// window, so a long line cannot wrap and a tall block cannot scroll, either
// of which would leave rows the next redraw cannot reach.
func NewTerminal(w io.Writer, tty bool) *Terminal {
	t := &Terminal{w: w, tty: tty, size: func() (int, int) { return 0, 0 }}
	if f, ok := w.(*os.File); ok && tty {
		t.size = func() (int, int) { return size(f) }
	}
	return t
}

// TTY reports whether the terminal draws live blocks.
func (t *Terminal) TTY() bool { return t.tty }

// Write writes log output. On a terminal it goes above the live blocks.
func (t *Terminal) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.tty {
		return t.w.Write(p)
	}
	var buf bytes.Buffer
	t.erase(&buf)
	buf.Write(p)
	if len(p) > 0 {
		t.midLine = p[len(p)-1] != '\n'
	}
	t.draw(&buf)
	if _, err := t.w.Write(buf.Bytes()); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Block is one live status block of a Terminal (a run's progress bar).
type Block struct {
	t     *Terminal
	lines []string
}

// Block adds an empty live block beneath the others.
func (t *Terminal) Block() *Block {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := &Block{t: t}
	t.blocks = append(t.blocks, b)
	return b
}

// Set replaces the block's lines. Off a terminal it writes them once, as
// plain lines.
func (b *Block) Set(lines []string) {
	t := b.t
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.tty {
		io.WriteString(t.w, strings.Join(lines, "\n")+"\n")
		return
	}
	var buf bytes.Buffer
	t.erase(&buf)
	b.lines = append(b.lines[:0], lines...)
	t.draw(&buf)
	t.w.Write(buf.Bytes())
}

// Finish writes lines as the block's last state, for good, above the blocks
// still live, and removes the block.
func (b *Block) Finish(lines []string) {
	t := b.t
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.tty {
		if len(lines) > 0 {
			io.WriteString(t.w, strings.Join(lines, "\n")+"\n")
		}
		return
	}
	var buf bytes.Buffer
	t.erase(&buf)
	if len(lines) > 0 {
		if t.midLine {
			buf.WriteString("\n")
			t.midLine = false
		}
		buf.WriteString(strings.Join(lines, "\n") + "\n")
	}
	for i, o := range t.blocks {
		if o == b {
			t.blocks = append(t.blocks[:i:i], t.blocks[i+1:]...)
			break
		}
	}
	t.draw(&buf)
	t.w.Write(buf.Bytes())
}

// erase moves to the first row of the blocks and clears to the end of the
// screen.
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

// draw writes the live blocks, leaving the cursor at the end of their last
// row. Nothing is drawn while a log line is unfinished: the next write that
// ends it draws them.
func (t *Terminal) draw(buf *bytes.Buffer) {
	if t.midLine {
		return
	}
	var lines []string
	for _, b := range t.blocks {
		lines = append(lines, b.lines...)
	}
	if len(lines) == 0 {
		return
	}
	cols, rows := t.size()
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
