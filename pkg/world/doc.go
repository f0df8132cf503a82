// Package world turns a contract's schema and seed into a frozen Postgres
// schema and runs throwaway copies of it.
//
// A world is created once per database, named by its hash (w_<16 hex>),
// under an advisory lock, and marked complete in suitegen_worlds (a ledger
// table of pkg/migrate), so racing processes end with one world. Beside it a
// twin schema (w_<hash>_b) holds the same data: world.before copies run
// there, so the two copies a proof holds open at once never wait on each
// other's row locks.
//
// Least privilege is by construction, not by filtering SQL. Each world has
// two roles of its own, made by the one function the application role may
// call to make roles (migrate.AdminFunction), with no attribute but LOGIN and
// no membership:
//
//   - the owner (w_<hash>_o<database oid>) owns both schemas. schema.sql and
//     the seed run in its own session, so what they may do is what the owner
//     may: build in its two schemas, nothing else. Its login is turned off
//     once the world is built.
//   - the copy role (w_<hash>_r<database oid>) may SELECT, INSERT, UPDATE and
//     DELETE the world's tables and use its sequences, and nothing else: not
//     the ledger, not other worlds, not the host's files (it is no superuser
//     and belongs to no role), not other sessions, no temporary tables, no
//     large objects, no advisory locks (the setup takes those from PUBLIC).
//     Its password is generated at creation and kept in suitegen_worlds,
//     which only the application role reads.
//
// A copy is a transaction in a session of the copy role (a pool of its own,
// never the application's, so there is no role to go back to), always rolled
// back. Its first statement inserts a row whose deferred trigger fails any
// commit, so whatever a copy is sent, COMMIT included, nothing it does
// outlives it. Every statement a contract, a scenario or a model sends runs
// between a savepoint and that savepoint's release, in the same round trip:
// a statement that ends the transaction makes the release fail, so nothing
// after it runs outside the copy. Each round trip has a wall-clock deadline
// that cancels the statement on the server even if the session turned its
// statement_timeout off; results are capped; a session a statement may have
// changed (PREPARE, DEALLOCATE, SET outside the transaction) is closed
// rather than reused.
//
// A statement guard (guard.go) still refuses, with a clear message, what is
// not a single SELECT, WITH, VALUES, TABLE, INSERT, UPDATE or DELETE, or what
// names a function that reaches files or other sessions (checks get the
// narrower SELECT-only guard, and run inside a savepoint that is rolled
// back). It splits the text with the lexer the schema reader uses
// (internal/pgsql). It is defence in depth: the tests run a hostile corpus
// with it switched off (Options.SkipGuard).
//
// A snapshot (state.go) of a copy costs what the copy changed, not the
// world's size: the frozen world's rows are read once per schema, when the
// world opens; a table the copy's transaction never touched (by its own row
// counters) is not sent; a table it only added to is sent as its own rows,
// told from the frozen ones by xmin; only a table whose frozen rows changed
// is sent whole.
//
// Each tool call runs inside a savepoint, sent together with the handler's
// first statement; a refusal or crash rolls back to it, which also repairs a
// transaction a failed statement aborted.
package world
