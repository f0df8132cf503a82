package stack

import (
	"os"
	"path/filepath"
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
