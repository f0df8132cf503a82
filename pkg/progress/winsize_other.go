//go:build !unix

package progress

import "os"

// size is unknown (zeros) where the window size cannot be read.
func size(*os.File) (cols, rows int) { return 0, 0 }
