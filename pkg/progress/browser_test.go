package progress_test

import (
	"bytes"
	"context"
	"image/png"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/suitegen/suitegen/pkg/progress"
)

// chromium finds the browser; under CI=true its absence fails the test
// (scripts/install-chromium.sh installs it), elsewhere it skips.
func chromium(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"/usr/bin/chromium", "chromium", "chromium-browser"} {
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("chromium not found; run scripts/install-chromium.sh")
	}
	t.Skip("chromium not found (install with scripts/install-chromium.sh); skipping the browser test")
	return ""
}

// browse runs headless chromium on url with extra flags and returns stdout.
func browse(t *testing.T, bin, url string, extra ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	args := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-dev-shm-usage", "--force-device-scale-factor=1", "--hide-scrollbars",
		"--user-data-dir=" + t.TempDir(), "--window-size=1200,900", "--virtual-time-budget=5000"}
	args = append(append(args, extra...), url)
	cmd := exec.CommandContext(ctx, bin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %v: %v\n%s", extra, err, stderr.String())
	}
	return stdout.Bytes()
}

func TestBrowser(t *testing.T) {
	bin := chromium(t)
	store := openLedger(t) // run-a: 4 of 10 proved

	// Loopback only; the server is stopped (and its goroutines with it) at the end.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: progress.Handler(store, progress.Options{}), ReadHeaderTimeout: 5 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
		<-done
	}()
	url := "http://" + ln.Addr().String() + "/"

	// The DOM after the script ran: the run and its counts are there.
	dom := string(browse(t, bin, url, "--dump-dom"))
	for _, want := range []string{`data-run="run-a"`, `data-proved="4"`, `data-asked="10"`, "proved 4/10",
		`data-use-case="cancel-order"`, "3/6", "b0 3/3", "ready", "empty", "prompt 1,200"} {
		if !strings.Contains(dom, want) {
			t.Errorf("rendered DOM lacks %q", want)
		}
	}
	if t.Failed() {
		t.Fatalf("DOM:\n%s", dom)
	}

	// The screenshot: the run bar's fill and track colours appear in the
	// proportion proved/asked.
	shot := filepath.Join(t.TempDir(), "shot.png")
	if dir := os.Getenv("PROGRESS_SHOT_DIR"); dir != "" {
		shot = filepath.Join(dir, "shot.png") // keep it to look at
	}
	browse(t, bin, url, "--screenshot="+shot)
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() != 1200 || b.Dy() != 900 {
		t.Fatalf("screenshot is %dx%d, want 1200x900", b.Dx(), b.Dy())
	}
	var fill, track int
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			switch [3]uint32{r >> 8, g >> 8, bl >> 8} {
			case [3]uint32{0x28, 0xa7, 0x45}:
				fill++
			case [3]uint32{0xdd, 0xe2, 0xe8}:
				track++
			}
		}
	}
	if fill+track < 24*500 {
		t.Fatalf("progress bar not rendered: %d fill and %d track pixels", fill, track)
	}
	share := float64(fill) / float64(fill+track)
	if share < 0.38 || share > 0.42 {
		t.Fatalf("bar shows %.3f filled (fill %d, track %d), want 0.40", share, fill, track)
	}
	t.Logf("bar: %d fill, %d track pixels: %.3f filled", fill, track, share)
}

// recorder counts the API requests a page makes, by path and status.
type recorder struct {
	next  http.Handler
	mu    sync.Mutex
	hits  map[string]map[int]int // path?query -> status -> n
	bytes int                    // API body bytes sent
}

type statusWriter struct {
	http.ResponseWriter
	code  int
	bytes int
}

func (w *statusWriter) WriteHeader(code int) {
	w.code = code
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(p []byte) (int, error) {
	n, err := w.ResponseWriter.Write(p)
	w.bytes += n
	return n, err
}

func (rec *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	sw := &statusWriter{ResponseWriter: w, code: 200}
	rec.next.ServeHTTP(sw, r)
	if !strings.HasPrefix(r.URL.Path, "/api/") {
		return
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	rec.bytes += sw.bytes
	key := r.URL.Path
	if r.URL.RawQuery != "" {
		key += "?" + r.URL.RawQuery
	}
	if rec.hits[key] == nil {
		rec.hits[key] = map[int]int{}
	}
	rec.hits[key][sw.code]++
}

func (rec *recorder) count(key string, code int) int {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return rec.hits[key][code]
}

func (rec *recorder) reset() {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	rec.hits, rec.bytes = map[string]map[int]int{}, 0
}

// TestBrowserLive: the page shows only live runs by default (a stalled one
// as stalled, a finished or long-abandoned one only under "show all"), the
// selected run's throughput, ETA, elapsed time, last activity and why its
// slices died, and it polls incrementally: no other run's detail is
// fetched, and unchanged answers come back 304.
func TestBrowserLive(t *testing.T) {
	bin := chromium(t)
	rec := &recorder{next: progress.Handler(fleet(t), progress.Options{}), hits: map[string]map[int]int{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: rec, ReadHeaderTimeout: 5 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
		<-done
	}()
	base := "http://" + ln.Addr().String() + "/"

	dom := string(browse(t, bin, base, "--dump-dom"))
	for _, want := range []string{`data-row="run-a"`, `data-row="run-stalled"`, `data-status="stalled"`, "show all (2 more)",
		`data-run="run-a"`, "throughput ", "ETA ", "elapsed ", "last activity ", "dead slices",
		"model: provider answered 401 unauthorized", "failed on writer w2", `class="clock"`} {
		if !strings.Contains(dom, want) {
			t.Errorf("default page lacks %q", want)
		}
	}
	for _, hidden := range []string{`data-row="run-old"`, `data-row="run-abandoned"`, `data-run="run-stalled"`} {
		if strings.Contains(dom, hidden) {
			t.Errorf("default page shows %q", hidden)
		}
	}
	if t.Failed() {
		t.Fatalf("DOM:\n%s", dom)
	}
	// Only the selected run's detail was asked for, and the answers that had
	// not changed since the last poll came back 304 with no body.
	if n := rec.count("/api/runs/run-stalled", 200) + rec.count("/api/runs/run-stalled", 304); n != 0 {
		t.Errorf("the page fetched an unselected run's detail %d times", n)
	}
	lists, unchanged := rec.count("/api/runs", 200)+rec.count("/api/runs", 304), rec.count("/api/runs", 304)
	details, detailUnchanged := rec.count("/api/runs/run-a", 200)+rec.count("/api/runs/run-a", 304), rec.count("/api/runs/run-a", 304)
	rec.mu.Lock()
	sent := rec.bytes
	rec.mu.Unlock()
	t.Logf("polls: list %d (%d unchanged), detail %d (%d unchanged); %d API body bytes in all", lists, unchanged, details, detailUnchanged, sent)
	if lists < 3 || unchanged < lists-1 || detailUnchanged < details-1 {
		t.Errorf("list polled %d times, %d answered 304; detail %d, %d answered 304: want several polls, all but the first 304",
			lists, unchanged, details, detailUnchanged)
	}

	rec.reset()
	dom = string(browse(t, bin, base+"?all=1", "--dump-dom"))
	for _, want := range []string{`data-row="run-a"`, `data-row="run-stalled"`, `data-row="run-old"`, `data-row="run-abandoned"`, "only live runs"} {
		if !strings.Contains(dom, want) {
			t.Errorf("?all=1 page lacks %q", want)
		}
	}
	if rec.count("/api/runs?all=1", 200) == 0 {
		t.Error("?all=1 page did not ask for every run")
	}

	dom = string(browse(t, bin, base+"#run=run-stalled", "--dump-dom"))
	for _, want := range []string{`data-run="run-stalled"`, "stalled-note", "stalled: no ledger activity for ", "Resume it with --run run-stalled"} {
		if !strings.Contains(dom, want) {
			t.Errorf("the stalled run's page lacks %q", want)
		}
	}
	if t.Failed() {
		t.Fatalf("DOM:\n%s", dom)
	}
}
