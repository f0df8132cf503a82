//go:build unix

package progress

import (
	"os"

	"golang.org/x/sys/unix"
)

// size is the width and height of the terminal f is, zeros when they cannot
// be read.
func size(f *os.File) (cols, rows int) {
	ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ)
	if err != nil {
		return 0, 0
	}
	return int(ws.Col), int(ws.Row)
}
