// Package stack runs suitegen's default infrastructure inside the calling
// process: an embedded JetStream-enabled NATS server and a PostgreSQL server
// started from the machine's own binaries as a child process we own.
//
// It exists so that "suitegen stack" (and every test binary) can get a real
// queue and a real database with no installation beyond the PostgreSQL
// binaries. Production deployments point suitegen at their own servers by URL
// instead, and Start then starts nothing.
//
// The PostgreSQL it starts asks every login for a password: suitegen's
// processes log in over 127.0.0.1 as an application role that is no
// superuser (its password kept beside the data dir, mode 0600); the
// superuser only through a Unix socket in a directory of the server's user,
// with a password made at each start and never written down. The database
// gets the least-privilege setup of pkg/migrate. Run as root, nothing
// outside the state dir is changed: a cluster the postgres user cannot
// reach goes under its home (see PostgresConfig.DataDir).
//
// Ownership rules: the Postgres child is tied to us with a parent-death signal
// so a SIGKILLed parent does not leave a server behind, and each data directory
// is guarded by an exclusive lock file (<DataDir>.lock). Holding that lock is
// what makes it safe to stop a live postgres found running on the data
// directory at start: no live suitegen process owns it, so it is an orphan of
// a killed run, and we stop it (SIGINT, then SIGKILL) rather than reuse it,
// because its port, settings and credentials are not ours to know.
package stack
