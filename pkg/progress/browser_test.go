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
	store := ledger(t) // run-a: 4 of 10 proved

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
