package progress

// SetSize fixes the window size t cuts its block to.
func SetSize(t *Terminal, cols, rows int) { t.size = func() (int, int) { return cols, rows } }
