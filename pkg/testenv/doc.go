// Package testenv gives tests real servers with one call: their own
// PostgreSQL database (migrations applied) and their own JetStream server.
//
// Use it from TestMain:
//
//	func TestMain(m *testing.M) { testenv.Main(m) }
//
// One PostgreSQL cluster is shared by the whole test binary, started lazily
// under a temporary directory on first use. Each call to Postgres copies a
// template database that was migrated once, which takes milliseconds, so
// tests never share tables and may run in parallel. Set
// SUITEGEN_TEST_DATABASE_URL (a postgres:// URL of a role allowed to create
// databases) to use an existing server instead. SUITEGEN_TEST_VERBOSE=1 shows
// the servers' lifecycle logs.
//
// NATSCluster starts n JetStream servers routed to each other (for a queue
// replicated across servers) and returns a URL listing them all.
//
// Main stops everything after the tests and then fails the binary on leaked
// goroutines, like goleak.VerifyTestMain, so packages need not call both.
package testenv
