//go:build unix

package progress

import (
	"os"

	"golang.org/x/sys/unix"
)

// columns is the width of the terminal f is, 0 when it cannot be read.
func columns(f *os.File) int {
	ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ)
	if err != nil {
		return 0
	}
	return int(ws.Col)
}
