package stack

import (
	"log/slog"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// postmaster.pid is read from disk a dead run left behind: any content.
func FuzzReadPostmasterPid(f *testing.F) {
	f.Add("12345\n/var/lib/pg\n1700000000\n5432\n")
	f.Add("")
	f.Add("-1\n")
	f.Add("99999999999999999999\n")
	f.Add(" 42 \r\n")
	f.Fuzz(func(t *testing.T, body string) {
		path := filepath.Join(t.TempDir(), "postmaster.pid")
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		pid, err := readPostmasterPid(path)
		if err == nil && pid <= 0 {
			t.Fatalf("accepted pid %d from %q", pid, body)
		}
	})
}

func TestTailKeepsTheEnd(t *testing.T) {
	tl := newTail(8)
	for _, s := range []string{"abc", "defgh", "ijklmnop", "qr"} {
		if _, err := tl.Write([]byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	if got := tl.String(); got != "klmnopqr" {
		t.Fatalf("tail = %q, want klmnopqr", got)
	}
	tl.Reset()
	if tl.String() != "" {
		t.Fatal("Reset left data")
	}
}

func TestAliveAndIsPostgresFor(t *testing.T) {
	if !alive(os.Getpid()) {
		t.Fatal("alive(self) = false")
	}
	if isPostgresFor(os.Getpid(), t.TempDir()) {
		t.Fatal("the test binary was taken for a postgres")
	}
	if alive(1 << 30) {
		t.Fatal("alive(huge pid) = true")
	}
	if pgVersion("/usr/lib/postgresql/15/bin") != 15 || pgVersion("/x/y") != 0 {
		t.Fatal("pgVersion")
	}
}

// A cluster placed in the server user's home is removed by a later placement
// once its state dir is gone, never while its state dir links to it or a
// server holds it; a state dir made again at the same path starts afresh.
func TestPlaceInHomeSweepsOrphans(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "home", "suitegen")
	if err := os.MkdirAll(filepath.Dir(root), 0o700); err != nil {
		t.Fatal(err)
	}
	cred := &syscall.Credential{Uid: uint32(os.Getuid()), Gid: uint32(os.Getgid())}
	log := slog.New(slog.DiscardHandler)
	place := func(state string) (string, *os.File) {
		t.Helper()
		if err := os.MkdirAll(state, 0o700); err != nil {
			t.Fatal(err)
		}
		target, lock, err := placeInHome(filepath.Join(state, "pg"), root, cred, log)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(target, 0o700); err != nil { // what initdb makes
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(target, "PG_VERSION"), []byte("15\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		return target, lock
	}
	gone, lockGone := place(filepath.Join(base, "gone"))
	kept, lockKept := place(filepath.Join(base, "kept"))
	held, lockHeld := place(filepath.Join(base, "held"))
	if err := os.WriteFile(filepath.Join(gone, "old"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	_ = lockGone.Close()
	_ = lockKept.Close()
	defer lockHeld.Close()
	for _, d := range []string{"gone", "held"} {
		if err := os.RemoveAll(filepath.Join(base, d)); err != nil {
			t.Fatal(err)
		}
	}

	// "gone" is made again at the same path: a fresh cluster, not the old one.
	again, lockAgain := place(filepath.Join(base, "gone"))
	defer lockAgain.Close()
	if again != gone {
		t.Fatalf("same state dir, another place: %s, then %s", gone, again)
	}
	if _, err := os.Stat(filepath.Join(again, "old")); !os.IsNotExist(err) {
		t.Fatalf("the old cluster of a deleted state dir was reused: %v", err)
	}
	// A fourth placement sweeps: "kept" still links to its cluster, "held"
	// is locked by a running server.
	_, lockFourth := place(filepath.Join(base, "fourth"))
	defer lockFourth.Close()
	for _, d := range []string{kept, held} {
		if _, err := os.Stat(filepath.Join(d, "PG_VERSION")); err != nil {
			t.Errorf("a cluster in use was swept: %v", err)
		}
	}
	_ = lockHeld.Close()
	_, lockFifth := place(filepath.Join(base, "fifth"))
	defer lockFifth.Close()
	if _, err := os.Stat(filepath.Dir(held)); !os.IsNotExist(err) {
		t.Errorf("a cluster whose state dir is gone and whose lock is free was left: %v", err)
	}
	if _, err := os.Stat(filepath.Join(kept, "PG_VERSION")); err != nil {
		t.Errorf("a cluster its state dir links to was swept: %v", err)
	}
}
