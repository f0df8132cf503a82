package world

import (
	"runtime"
	"sync"
	"weak"

	"github.com/jackc/pgx/v5"
)

// knownStmts are the SQL texts that prepared successfully on one connection.
// A connection is used by one copy at a time, and the pool hands it over with
// a happens-before edge, so the set needs no lock of its own.
type knownStmts struct{ set map[string]struct{} }

func (k *knownStmts) has(sql string) bool { _, ok := k.set[sql]; return ok }

func (k *knownStmts) add(sql string) {
	if len(k.set) >= maxKnown { // bounded: forgetting only costs a round trip
		clear(k.set)
	}
	k.set[sql] = struct{}{}
}

const maxKnown = 4096

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
	k := &knownStmts{set: map[string]struct{}{}}
	if v, loaded := w.stmtSets.m.LoadOrStore(key, k); loaded {
		return v.(*knownStmts)
	}
	runtime.AddCleanup(conn, func(key weak.Pointer[pgx.Conn]) { w.stmtSets.m.Delete(key) }, key)
	return k
}
