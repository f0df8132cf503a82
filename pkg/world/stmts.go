package world

import (
	"context"
	"crypto/sha256"
	"encoding/hex"

	"github.com/jackc/pgx/v5"
)

// knownStmts are the world statements prepared on one session, by SQL
// text, with the name each was prepared under. A session is used by one
// copy at a time, and conns hands it over with a happens-before edge (its
// mutex), so the set needs no lock of its own.
type knownStmts struct{ set map[string]string }

func (k *knownStmts) has(sql string) bool { _, ok := k.set[sql]; return ok }

func (k *knownStmts) name(sql string) (string, bool) { n, ok := k.set[sql]; return n, ok }

func (k *knownStmts) add(sql, name string) { k.set[sql] = name }

// room keeps the set (and the server's prepared statements) bounded: when n
// more would pass maxKnown, this world's statements on the connection are
// deallocated and forgotten (other worlds' stay prepared). Only handlers that
// build SQL text from values get there; forgetting costs a prepare later.
func (k *knownStmts) room(ctx context.Context, conn *pgx.Conn, n int) error {
	if len(k.set)+n <= maxKnown {
		return nil
	}
	for sql, name := range k.set {
		if err := conn.Deallocate(ctx, name); err != nil {
			return err
		}
		delete(k.set, sql)
	}
	return nil
}

const maxKnown = 2048

// stmtName is the server-side name of a world statement: Postgres compares
// only the first 63 bytes of a name, and our statements share long prefixes.
func stmtName(sql string) string {
	sum := sha256.Sum256([]byte(sql))
	return "sg_" + hex.EncodeToString(sum[:16])
}
