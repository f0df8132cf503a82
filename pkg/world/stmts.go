package world

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"runtime"
	"sync"
	"weak"

	"github.com/jackc/pgx/v5"
)

// knownStmts are the world statements prepared on one connection, by SQL
// text, with the name each was prepared under. A connection is used by one
// copy at a time, and the pool hands it over with a happens-before edge, so
// the set needs no lock of its own.
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

// stmtSets maps connections to their known statements without keeping
// closed connections alive.
type stmtSets struct {
	m sync.Map // weak.Pointer[pgx.Conn] -> *knownStmts
}

func (w *World) known(conn *pgx.Conn) *knownStmts {
	key := weak.Make(conn)
	if v, ok := w.stmtSets.m.Load(key); ok {
		return v.(*knownStmts)
	}
	k := &knownStmts{set: map[string]string{}}
	if v, loaded := w.stmtSets.m.LoadOrStore(key, k); loaded {
		return v.(*knownStmts)
	}
	runtime.AddCleanup(conn, func(key weak.Pointer[pgx.Conn]) { w.stmtSets.m.Delete(key) }, key)
	return k
}
