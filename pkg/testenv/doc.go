// Package testenv gives tests real servers with one call: their own
// PostgreSQL database (set up and migrated) and their own JetStream server.
//
// Use it from TestMain:
//
//	func TestMain(m *testing.M) { testenv.Main(m) }
//
// One PostgreSQL cluster is shared by the whole test binary, started lazily
// under a temporary directory on first use, with the authentication of any
// embedded server (pkg/stack). Each call to Postgres copies a template
// database that was set up for least privilege (migrate.Setup) and migrated
// once, which takes milliseconds, so tests never share tables and may run in
// parallel. Tests connect as the application role, as suitegen does: no
// superuser, no CREATEROLE; AdminURL gives a superuser's URL for what only a
// superuser may look at. ServerDir gives a directory a PostgreSQL started by
// pkg/stack may keep its cluster in (run as root, the server's user cannot
// enter t.TempDir()).
//
// Set SUITEGEN_TEST_DATABASE_URL (a postgres:// URL of a superuser, on a
// throwaway server) to use an existing server instead: the binary makes an
// application role of its own there, and drops it, its template and the
// roles its databases' worlds made when it is done. SUITEGEN_TEST_VERBOSE=1
// shows the servers' lifecycle logs.
//
// NATSCluster starts n JetStream servers routed to each other (for a queue
// replicated across servers) and returns a URL listing them all.
//
// OutsideRace marks a test make test runs in its pass without the race
// detector (scripts/outsiderace lists them); its race pass skips it.
//
// Main stops everything after the tests and then fails the binary on leaked
// goroutines, like goleak.VerifyTestMain, so packages need not call both.
package testenv
