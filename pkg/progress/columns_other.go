//go:build !unix

package progress

import "os"

// columns is 0 (unknown) where the window size cannot be read.
func columns(*os.File) int { return 0 }
