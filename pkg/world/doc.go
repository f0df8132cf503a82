// Package world turns a contract's schema and seed into a frozen Postgres
// schema and runs throwaway copies of it.
//
// A world is created once per database, named by its hash (w_<16 hex>), under
// a transaction-scoped advisory lock, and marked complete in
// public.suitegen_worlds (created here with CREATE TABLE IF NOT EXISTS), so
// racing processes end with one world. Beside it a twin schema (w_<hash>_b)
// holds the same data: world.before copies run there, so the two copies a
// proof holds open at once never wait on each other's row locks.
//
// A copy is a transaction that is always rolled back. Inside it, SQL runs with
// search_path set to the world, as a NOLOGIN role (w_<hash>_r) that can only
// read and write the world's tables, in UTC, with a statement timeout. Since
// RESET ROLE would return to the session user, every statement a contract,
// a scenario or a model sends first passes a guard: one statement, starting
// with SELECT, WITH, VALUES, TABLE, INSERT, UPDATE or DELETE, that never names
// set_config (checks get the narrower SELECT-only guard, and run inside a
// savepoint that is rolled back).
//
// Each tool call runs inside a savepoint, sent together with the handler's
// first statement; a refusal or crash rolls back to it, which also repairs a
// transaction a failed statement aborted.
package world
