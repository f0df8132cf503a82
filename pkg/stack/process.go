package stack

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// child is a started process and the outcome of waiting for it.
type child struct {
	cmd  *exec.Cmd
	done chan struct{} // closed once the process has been reaped
	err  error         // Wait's result, valid after done
}

// startChild starts cmd from a goroutine locked to its OS thread and keeps
// that thread until the process is reaped. Linux delivers the parent-death
// signal when the forking *thread* exits, and the Go runtime may retire idle
// threads, so without this a healthy parent could kill its own server.
func startChild(cmd *exec.Cmd) (*child, error) {
	c := &child{cmd: cmd, done: make(chan struct{})}
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread dies with this goroutine, after the child
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		c.err = cmd.Wait()
		close(c.done)
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	return c, nil
}

// serverCredential is nil unless we are root, in which case the server must
// run as the postgres system user (postgres refuses to run as root).
func serverCredential() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("stack: running as root needs a \"postgres\" system user to run the server: %w", err)
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err := errors.Join(err1, err2); err != nil {
		return nil, fmt.Errorf("stack: postgres user ids: %w", err)
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}, nil
}

// placeCluster returns the directory the cluster lives in, made and handed
// to the server's user when it is not there yet, and, for a cluster placed
// in that user's home, the lock held on it for the server's life (nil
// otherwise).
//
// When the server runs as another user (we are root), no directory outside
// dataDir is changed: if that user cannot traverse every directory above
// dataDir (a home directory usually stops it), the cluster goes under that
// user's home, in suitegen/<hash of dataDir>/pg, and dataDir becomes a
// symbolic link to it. A dataDir that already is such a link is followed.
func placeCluster(dataDir string, cred *syscall.Credential, log *slog.Logger) (string, *os.File, error) {
	if cred == nil {
		if err := os.MkdirAll(dataDir, 0o700); err != nil {
			return "", nil, fmt.Errorf("stack: create data dir: %w", err)
		}
		// postgres insists on 0700 or 0750.
		if err := os.Chmod(dataDir, 0o700); err != nil {
			return "", nil, fmt.Errorf("stack: chmod data dir: %w", err)
		}
		return dataDir, nil, nil
	}
	if fi, err := os.Lstat(dataDir); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		target, err := os.Readlink(dataDir)
		if err != nil {
			return "", nil, fmt.Errorf("stack: data dir link: %w", err)
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(dataDir), target)
		}
		if err := ownedBy(target, cred); err != nil {
			return "", nil, err
		}
		// A cluster of ours in the server user's home is claimed so that no
		// sweep takes it; a link elsewhere is the user's to keep.
		home, err := serverHome(cred)
		if err != nil || filepath.Dir(filepath.Dir(target)) != filepath.Join(home, "suitegen") {
			return target, nil, nil
		}
		lock, err := claimHomed(filepath.Dir(target), dataDir)
		return target, lock, err
	}
	if reachable(filepath.Dir(dataDir), cred) {
		return dataDir, nil, handOver(dataDir, cred)
	}
	if entries, err := os.ReadDir(dataDir); err == nil && len(entries) > 0 {
		return "", nil, fmt.Errorf("stack: the postgres user cannot reach the data dir %s, which holds files already; "+
			"move it somewhere every directory above is searchable by others (e.g. under /srv or /var/lib), or choose another state dir", dataDir)
	}
	home, err := serverHome(cred)
	if err != nil {
		return "", nil, err
	}
	return placeInHome(dataDir, filepath.Join(home, "suitegen"), cred, log)
}

// A cluster placed in the server user's home outlives the state dir that
// only links to it: deleting a temporary state dir (a test's, a one-off
// run's) would leave tens of megabytes there for good, one per run. So each
// such cluster's directory holds the path of its link (homeOwner) and a lock
// held while a server uses it (homeLock), and every placement removes the
// clusters whose link is gone and whose lock is free.
const (
	homeOwner = "owner"
	homeLock  = "lock"
)

// placeInHome places dataDir's cluster in root/<hash of dataDir>/pg and
// links dataDir to it, after sweeping root of clusters no state dir links to
// (a state dir deleted and made again at the same path starts afresh too).
func placeInHome(dataDir, root string, cred *syscall.Credential, log *slog.Logger) (string, *os.File, error) {
	if err := mkdirOwned(root, cred); err != nil {
		return "", nil, err
	}
	sweepHomed(root, log)
	sum := sha256.Sum256([]byte(dataDir))
	dir := filepath.Join(root, hex.EncodeToString(sum[:8]))
	var lock *os.File
	for lock == nil {
		if err := mkdirOwned(dir, cred); err != nil {
			return "", nil, err
		}
		var err error
		if lock, err = claimHomed(dir, dataDir); err != nil && !errors.Is(err, errSwept) {
			return "", nil, err
		}
	}
	target := filepath.Join(dir, "pg")
	if err := os.Remove(dataDir); err != nil && !errors.Is(err, fs.ErrNotExist) { // an empty dir made for us
		_ = lock.Close()
		return "", nil, fmt.Errorf("stack: replace data dir by a link: %w", err)
	}
	if err := os.Symlink(target, dataDir); err != nil {
		_ = lock.Close()
		return "", nil, fmt.Errorf("stack: link data dir: %w", err)
	}
	log.Info("the postgres user cannot reach the state dir: cluster placed in its home", "cluster", target)
	return target, lock, nil
}

// errSwept is a cluster directory another process's sweep removed while
// claimHomed waited for its lock: make it again.
var errSwept = errors.New("stack: cluster directory swept while waiting for it")

// claimHomed takes the lock of a cluster's directory in the server user's
// home (waiting out a sweep that holds it for a moment) and records dataDir
// as its link, so a sweep leaves it alone. Only the process holding
// dataDir's own lock gets here, so no server waits on another.
func claimHomed(dir, dataDir string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, homeLock), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("stack: open cluster lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("stack: lock cluster: %w", err)
	}
	held, err1 := f.Stat()
	there, err2 := os.Stat(filepath.Join(dir, homeLock))
	if err1 != nil || err2 != nil || !os.SameFile(held, there) {
		_ = f.Close()
		return nil, errSwept
	}
	if err := os.WriteFile(filepath.Join(dir, homeOwner), []byte(dataDir+"\n"), 0o600); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("stack: record cluster's link: %w", err)
	}
	return f, nil
}

// sweepHomed removes, from root, every cluster directory whose
// recorded link no longer points to it (its state dir was deleted or
// replaced) and whose lock no server holds. A directory without a record is
// left: nothing says whose it is.
func sweepHomed(root string, log *slog.Logger) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return
	}
	for _, e := range entries {
		dir := filepath.Join(root, e.Name())
		if !e.IsDir() { // never a link: only our own directories
			continue
		}
		owner, err := os.ReadFile(filepath.Join(dir, homeOwner))
		if err != nil {
			continue
		}
		link := strings.TrimSpace(string(owner))
		if to, err := os.Readlink(link); err == nil && to == filepath.Join(dir, "pg") {
			continue
		}
		f, err := os.OpenFile(filepath.Join(dir, homeLock), os.O_RDWR, 0)
		if err != nil {
			continue
		}
		if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil {
			// Read again under the lock: a server may have claimed it since.
			if to, err := os.Readlink(link); err != nil || to != filepath.Join(dir, "pg") {
				if err := os.RemoveAll(dir); err == nil {
					log.Info("removed a cluster whose state dir is gone", "cluster", dir, "state_dir", filepath.Dir(link))
				}
			}
		}
		_ = f.Close()
	}
}

// makeSocketDir makes the directory the server's Unix socket goes in:
// <cluster>.sock, entered by the server's user only; a private temporary
// directory (removed at stop) when that path is too long for a socket.
func makeSocketDir(clusterDir string, cred *syscall.Credential) (dir string, temp bool, err error) {
	dir = clusterDir + ".sock"
	if len(dir)+len("/.s.PGSQL.65535") >= 100 { // sun_path holds 108 bytes
		if dir, err = os.MkdirTemp("", "sgpg-"); err != nil {
			return "", false, fmt.Errorf("stack: create socket dir: %w", err)
		}
		temp = true
		if cred != nil {
			if err := os.Lchown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
				return "", false, fmt.Errorf("stack: chown socket dir: %w", err)
			}
		}
		return dir, temp, nil
	}
	if cred == nil {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return "", false, fmt.Errorf("stack: create socket dir: %w", err)
		}
		return dir, false, os.Chmod(dir, 0o700)
	}
	return dir, false, mkdirOwned(dir, cred)
}

// handOver makes dir (in a directory only we control) and gives it, and what
// it holds, to the server's user.
func handOver(dir string, cred *syscall.Credential) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("stack: create data dir: %w", err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return fmt.Errorf("stack: chmod data dir: %w", err)
	}
	st, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("stack: stat data dir: %w", err)
	}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok && sys.Uid == cred.Uid {
		return nil
	}
	err = filepath.WalkDir(dir, func(path string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(path, int(cred.Uid), int(cred.Gid))
	})
	if err != nil {
		return fmt.Errorf("stack: chown data dir to postgres: %w", err)
	}
	return nil
}

// mkdirOwned makes dir (mode 0700) for the server's user, or checks that
// the dir there is a directory of that user's, never following a link: the
// server's user controls the directories this is used in.
func mkdirOwned(dir string, cred *syscall.Credential) error {
	err := os.Mkdir(dir, 0o700)
	if err == nil {
		if err := os.Lchown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			return fmt.Errorf("stack: chown %s: %w", dir, err)
		}
		return nil
	}
	if !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("stack: create %s: %w", dir, err)
	}
	return ownedBy(dir, cred)
}

func ownedBy(dir string, cred *syscall.Credential) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("stack: %w", err)
	}
	sys, ok := fi.Sys().(*syscall.Stat_t)
	if !fi.IsDir() || !ok || sys.Uid != cred.Uid {
		return fmt.Errorf("stack: %s is not a directory of the postgres user's", dir)
	}
	return nil
}

// serverHome is the home directory of the server's user, which must be a
// directory of that user's.
func serverHome(cred *syscall.Credential) (string, error) {
	u, err := user.LookupId(strconv.FormatUint(uint64(cred.Uid), 10))
	if err != nil {
		return "", fmt.Errorf("stack: the postgres user's home: %w", err)
	}
	if u.HomeDir == "" || !filepath.IsAbs(u.HomeDir) || ownedBy(u.HomeDir, cred) != nil {
		return "", fmt.Errorf("stack: the postgres user's home %q is not a directory of its own; choose a state dir every directory above which others may search", u.HomeDir)
	}
	return u.HomeDir, nil
}

// reachable reports whether the server's user can traverse dir and every
// directory above it.
func reachable(dir string, cred *syscall.Credential) bool {
	for p := dir; ; p = filepath.Dir(p) {
		st, err := os.Stat(p)
		if err != nil || !canTraverse(st, cred) {
			return false
		}
		if p == filepath.Dir(p) {
			return true
		}
	}
}

// lockDataDir takes an exclusive, non-blocking flock on <dir>.lock, held for
// the server's life. The kernel drops it when we die, however we die.
//
// A lock just released can still be held for a moment: a process this one
// forks (to start any program, from any goroutine) shares every open file
// until it executes, when close-on-exec drops them. So a lock held is tried
// again a few times over lockSettle before the directory is called in use.
func lockDataDir(dir string) (*os.File, error) {
	f, err := os.OpenFile(dir+".lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("stack: open data dir lock: %w", err)
	}
	for try := 0; ; try++ {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return f, nil
		}
		if errors.Is(err, syscall.EWOULDBLOCK) && try < lockTries {
			time.Sleep(lockSettle / lockTries)
			continue
		}
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w: %s is locked by another process", ErrDataDirInUse, dir)
		}
		return nil, fmt.Errorf("stack: lock data dir: %w", err)
	}
}

// lockSettle is how long lockDataDir waits for a lock held by a process
// between its fork and its exec, in lockTries steps.
const (
	lockSettle = 2 * time.Second
	lockTries  = 20
)

// findBinDir locates initdb and postgres.
func findBinDir(override string) (string, error) {
	has := func(dir string) bool {
		for _, name := range []string{"initdb", "postgres"} {
			if st, err := os.Stat(filepath.Join(dir, name)); err != nil || st.IsDir() {
				return false
			}
		}
		return true
	}
	if override != "" {
		if !has(override) {
			return "", fmt.Errorf("stack: PostgresConfig.BinDir %s has no initdb and postgres", override)
		}
		return override, nil
	}
	if out, err := exec.Command("pg_config", "--bindir").Output(); err == nil {
		if dir := strings.TrimSpace(string(out)); has(dir) {
			return dir, nil
		}
	}
	if path, err := exec.LookPath("postgres"); err == nil {
		if dir := filepath.Dir(path); has(dir) {
			return dir, nil
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return pgVersion(dirs[i]) > pgVersion(dirs[j]) })
	for _, dir := range dirs {
		if has(dir) {
			return dir, nil
		}
	}
	return "", errors.New("stack: no PostgreSQL binaries found (tried pg_config --bindir, PATH, /usr/lib/postgresql/*/bin); install postgresql or set PostgresConfig.BinDir")
}

// pgVersion reads the version from /usr/lib/postgresql/<v>/bin; 0 if unparsable.
func pgVersion(binDir string) float64 {
	v, err := strconv.ParseFloat(filepath.Base(filepath.Dir(binDir)), 64)
	if err != nil {
		return 0
	}
	return v
}

// clearStale deals with a postmaster.pid left by a run that died without
// stopping its server. We hold the data dir lock, so no live suitegen process
// owns that server: a live postgres on this data dir is an orphan and is
// stopped; a pid file naming anything else is removed.
func clearStale(ctx context.Context, dataDir string, log *slog.Logger) error {
	pidFile := filepath.Join(dataDir, "postmaster.pid")
	pid, err := readPostmasterPid(pidFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		log.Warn("removing unreadable postmaster.pid", "err", err)
		return removePidFile(pidFile)
	}
	if !isPostgresFor(pid, dataDir) {
		log.Warn("removing stale postmaster.pid", "pid", pid)
		return removePidFile(pidFile)
	}
	log.Warn("stopping orphaned postgres left on the data dir", "pid", pid)
	_ = syscall.Kill(pid, syscall.SIGINT)
	if !waitGone(ctx, pid, 15*time.Second) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		if !waitGone(ctx, pid, 5*time.Second) {
			return fmt.Errorf("stack: orphaned postgres pid %d on %s will not die", pid, dataDir)
		}
	}
	// A killed postmaster leaves its pid file; postgres would cope, but a
	// later reuse of the pid by another process would not.
	if err := removePidFile(pidFile); err != nil {
		return err
	}
	return nil
}

func readPostmasterPid(path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	if !sc.Scan() {
		return 0, fmt.Errorf("stack: %s is empty", path)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(sc.Text()))
	if err != nil || pid <= 0 {
		return 0, fmt.Errorf("stack: %s: bad pid %q", path, sc.Text())
	}
	return pid, nil
}

func removePidFile(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("stack: remove stale pid file: %w", err)
	}
	return nil
}

// isPostgresFor reports whether pid is a live postgres whose working
// directory is dataDir (the postmaster chdirs into its data directory).
func isPostgresFor(pid int, dataDir string) bool {
	if !alive(pid) {
		return false
	}
	exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
	if err != nil || !strings.HasPrefix(filepath.Base(exe), "postgres") {
		return false
	}
	cwd, err := os.Readlink(fmt.Sprintf("/proc/%d/cwd", pid))
	if err != nil {
		return false
	}
	want, err := filepath.EvalSymlinks(dataDir)
	if err != nil {
		want = dataDir
	}
	return filepath.Clean(cwd) == filepath.Clean(want)
}

// alive reports whether pid exists and is not a zombie.
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the parenthesised command name, which may hold spaces.
	if i := strings.LastIndexByte(string(stat), ')'); i >= 0 && i+2 < len(stat) {
		return stat[i+2] != 'Z' && stat[i+2] != 'X'
	}
	return true
}

func waitGone(ctx context.Context, pid int, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for alive(pid) {
		if time.Now().After(deadline) || ctx.Err() != nil {
			return false
		}
		time.Sleep(50 * time.Millisecond)
	}
	return true
}

func canTraverse(st os.FileInfo, cred *syscall.Credential) bool {
	m := st.Mode().Perm()
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return m&0o001 != 0
	}
	switch {
	case sys.Uid == cred.Uid:
		return m&0o100 != 0
	case sys.Gid == cred.Gid:
		return m&0o010 != 0
	default:
		return m&0o001 != 0
	}
}
