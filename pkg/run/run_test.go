package run

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/suitegen/suitegen/pkg/brief"
	"github.com/suitegen/suitegen/pkg/model"
	"github.com/suitegen/suitegen/pkg/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// waitingModel answers no call until stop is closed, so the run stays in
// its writing stage for as long as the test looks at it; then it finishes
// every slice at once, so the writers stop without a drain.
type waitingModel struct{ called, stop chan struct{} }

func (m *waitingModel) Name() string { return "waiting" }
func (m *waitingModel) Complete(ctx context.Context, _ model.Request) (model.Response, error) {
	select {
	case m.called <- struct{}{}:
	default:
	}
	select {
	case <-ctx.Done():
		return model.Response{}, ctx.Err()
	case <-m.stop:
		return model.Response{Message: model.Message{Role: model.RoleAssistant,
			ToolCalls: []model.ToolCall{{ID: "call_1", Name: brief.ToolFinish, Arguments: "{}"}}}}, nil
	}
}

// TestRunExportsRunFigures: `suitegen run --metrics-addr` serves the run
// figures read from the ledger (suitegen_run_*), as `suitegen serve` does,
// beside the process series, and reports ready while its servers answer.
func TestRunExportsRunFigures(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	m := &waitingModel{called: make(chan struct{}, 1), stop: make(chan struct{})}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := Run(ctx, Config{Dirs: []string{"../../examples/retail"}, Asked: 2, Writers: 1, Out: t.TempDir(),
			RunID: "figures", Client: m, DatabaseURL: testenv.PostgresURL(t), NATSURL: testenv.NATS(t), MetricsAddr: addr,
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		done <- err
	}()
	<-m.called // the run is planned and a writer is at work on it

	want := []string{`suitegen_run_buckets{run="figures",state="open"}`, `suitegen_run_budget_cap_tokens{run="figures"}`,
		`suitegen_run_last_activity_timestamp_seconds{run="figures"}`, `suitegen_run_scenarios_asked{run="figures"} 2`,
		`suitegen_ready{role="writer"} 1`, `suitegen_slices_in_flight{role="writer",run="figures"} 1`}
	deadline := time.Now().Add(time.Minute)
	var body string
	for {
		body = scrape(t, "http://"+addr+"/metrics")
		missing := ""
		for _, w := range want {
			if !strings.Contains(body, w) {
				missing = w
				break
			}
		}
		if missing == "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s in /metrics after a minute:\n%s", missing, body)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if got := scrape(t, "http://"+addr+"/readyz"); !strings.HasPrefix(got, "ready") {
		t.Errorf("/readyz: %q", got)
	}
	close(m.stop)
	cancel()
	<-done // interrupted: its error says so
}

func scrape(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}
