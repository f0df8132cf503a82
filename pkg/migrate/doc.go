// Package migrate brings a suitegen database to the current schema.
//
// Migrations are the files sql/NNNN_name.sql embedded in the binary, applied
// in version order, each in its own transaction together with its row in
// suitegen_migrations, so a file is either wholly applied and recorded or not
// at all. Every process runs Apply at start; a Postgres advisory lock, held on
// one dedicated connection for the whole run, makes concurrent starts take
// turns, so each migration is applied exactly once however many writers boot
// together.
//
// Numbering: 0001-0009 are the framework's own; packages add 0010 and up,
// leaving gaps so files can be slotted in. A file must be valid inside a
// transaction (no CREATE INDEX CONCURRENTLY), and should be idempotent
// (IF NOT EXISTS) so a database built by hand survives its first Apply.
//
// Migrations run as the application role, which owns the database and is no
// superuser. What needs a superuser is done once, before: ServerSQL (the
// roles and the database) and SetupSQL (what PUBLIC may no longer do, and
// the one function that makes world roles), which Setup runs and
// docs/SECURITY.md shows a DBA.
package migrate
