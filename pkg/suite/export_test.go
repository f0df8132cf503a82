package suite

// SetPageSize sets how many scenarios Write reads at once, until the test
// ends.
func SetPageSize(t interface{ Cleanup(func()) }, n int) {
	was := pageSize
	pageSize = n
	t.Cleanup(func() { pageSize = was })
}
