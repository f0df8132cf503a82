// Package grafanatest checks a Grafana dashboard against a real Prometheus: it starts a
// private prometheus scraping the given targets, then runs every panel query (with the
// dashboard's template variables substituted) through Prometheus's HTTP API and requires
// each to parse and return data. The scrape targets are parameters, so the same check
// runs against synthetic activity (this package's test) or a live `suitegen run`.
package grafanatest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/suitegen/suitegen/pkg/testenv"
)

// Target is one panel query of a dashboard.
type Target struct {
	Panel   string // panel title
	RefID   string
	Expr    string
	Instant bool // an instant query in Grafana; otherwise a range query
}

func (t Target) String() string { return fmt.Sprintf("%q %s", t.Panel, t.RefID) }

type jsonPanel struct {
	Title   string      `json:"title"`
	Panels  []jsonPanel `json:"panels"`
	Targets []struct {
		RefID   string `json:"refId"`
		Expr    string `json:"expr"`
		Instant bool   `json:"instant"`
		Range   *bool  `json:"range"`
	} `json:"targets"`
}

// Variable is a dashboard template variable.
type Variable struct {
	Name  string
	Type  string // datasource, query, custom, ...
	Query string // for query variables, e.g. label_values(metric, label)
}

// Targets returns every panel target of the dashboard, including those of panels nested in
// collapsed rows. A panel target with an empty expression is an error: Grafana would run it
// as nothing and the panel would sit empty.
func Targets(dashboard []byte) ([]Target, error) {
	var d struct {
		Panels []jsonPanel `json:"panels"`
	}
	if err := json.Unmarshal(dashboard, &d); err != nil {
		return nil, fmt.Errorf("grafanatest: decode dashboard: %w", err)
	}
	var out []Target
	var walk func([]jsonPanel) error
	walk = func(ps []jsonPanel) error {
		for _, p := range ps {
			for _, t := range p.Targets {
				if strings.TrimSpace(t.Expr) == "" {
					return fmt.Errorf("grafanatest: panel %q target %s has no expr", p.Title, t.RefID)
				}
				out = append(out, Target{Panel: p.Title, RefID: t.RefID, Expr: t.Expr, Instant: t.Instant && (t.Range == nil || !*t.Range)})
			}
			if err := walk(p.Panels); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(d.Panels); err != nil {
		return nil, err
	}
	return out, nil
}

// Variables returns the dashboard's template variables.
func Variables(dashboard []byte) ([]Variable, error) {
	var d struct {
		Templating struct {
			List []struct {
				Name  string          `json:"name"`
				Type  string          `json:"type"`
				Query json.RawMessage `json:"query"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(dashboard, &d); err != nil {
		return nil, fmt.Errorf("grafanatest: decode dashboard: %w", err)
	}
	var out []Variable
	for _, v := range d.Templating.List {
		var q string
		if err := json.Unmarshal(v.Query, &q); err != nil {
			// Newer Grafana stores query variables as {"query": "...", "refId": ...}.
			var obj struct {
				Query string `json:"query"`
			}
			if err := json.Unmarshal(v.Query, &obj); err != nil {
				return nil, fmt.Errorf("grafanatest: variable %s: query: %w", v.Name, err)
			}
			q = obj.Query
		}
		out = append(out, Variable{Name: v.Name, Type: v.Type, Query: q})
	}
	return out, nil
}

// DefaultVars are values for run and Grafana's built-in interval variables that suit a
// Prometheus scraping every second.
func DefaultVars(run string) map[string]string {
	return map[string]string{
		"run":             run,
		"__rate_interval": "10s",
		"__interval":      "2s",
		"__range":         "5m",
	}
}

var varRE = regexp.MustCompile(`\$\{(\w+)(?::\w+)?\}|\[\[(\w+)\]\]|\$(\w+)`)

// ErrUnknownVariable is returned by Substitute for a variable missing from vars.
var ErrUnknownVariable = errors.New("unknown template variable")

// Substitute replaces Grafana template variables ($name, ${name}, ${name:fmt}, [[name]])
// in expr with their values.
func Substitute(expr string, vars map[string]string) (string, error) {
	var missing []string
	out := varRE.ReplaceAllStringFunc(expr, func(m string) string {
		sub := varRE.FindStringSubmatch(m)
		name := sub[1] + sub[2] + sub[3]
		v, ok := vars[name]
		if !ok {
			missing = append(missing, name)
			return m
		}
		return v
	})
	if len(missing) > 0 {
		return "", fmt.Errorf("grafanatest: %w: %s in %q", ErrUnknownVariable, strings.Join(missing, ", "), expr)
	}
	return out, nil
}

// Binary finds the prometheus binary: $SUITEGEN_PROMETHEUS, then PATH, then
// /usr/bin/prometheus. When none exists it skips the test, unless CI is set, where a
// missing binary fails it (deploy/install-prometheus.sh installs one).
func Binary(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("SUITEGEN_PROMETHEUS"); p != "" {
		return p
	}
	if p, err := exec.LookPath("prometheus"); err == nil {
		return p
	}
	if _, err := os.Stat("/usr/bin/prometheus"); err == nil {
		return "/usr/bin/prometheus"
	}
	if os.Getenv("CI") != "" {
		t.Fatal("prometheus binary not found and CI is set: run deploy/install-prometheus.sh")
	}
	t.Skip("prometheus binary not found (run deploy/install-prometheus.sh); skipping the dashboard check")
	return ""
}

// Prometheus is a private prometheus process started by Start.
type Prometheus struct {
	URL    string // http://127.0.0.1:port
	stderr *testenv.Buffer
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// Start runs prometheus on a random loopback port with a temporary storage directory,
// scraping targets (host:port, path /metrics) every second under job "suitegen". It is
// stopped when the test ends.
func Start(t testing.TB, targets ...string) *Prometheus {
	t.Helper()
	return StartWith(t, Options{}, targets...)
}

// Options are what StartWith adds to Start.
type Options struct {
	// RuleFiles are Prometheus rule files to load (evaluated every second).
	RuleFiles []string
}

// StartWith is Start with options.
func StartWith(t testing.TB, opts Options, targets ...string) *Prometheus {
	t.Helper()
	bin := Binary(t)
	dir := t.TempDir()
	var quoted []string
	for _, tg := range targets {
		quoted = append(quoted, fmt.Sprintf("%q", tg))
	}
	rules := ""
	if len(opts.RuleFiles) > 0 {
		rules = "rule_files:\n"
		for _, f := range opts.RuleFiles {
			abs, err := filepath.Abs(f)
			if err != nil {
				t.Fatal(err)
			}
			rules += fmt.Sprintf("  - %q\n", abs)
		}
	}
	cfg := fmt.Sprintf(`global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
%sscrape_configs:
  - job_name: suitegen
    metrics_path: /metrics
    static_configs:
      - targets: [%s]
`, rules, strings.Join(quoted, ", "))
	cfgPath := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}

	// The free port may be taken between our probe and prometheus's bind; retry.
	for attempt := 0; attempt < 3; attempt++ {
		port, err := freePort()
		if err != nil {
			t.Fatal(err)
		}
		p := &Prometheus{URL: fmt.Sprintf("http://127.0.0.1:%d", port), stderr: &testenv.Buffer{}}
		cmd := exec.Command(bin,
			"--config.file="+cfgPath,
			fmt.Sprintf("--storage.tsdb.path=%s", filepath.Join(dir, fmt.Sprintf("data%d", attempt))),
			fmt.Sprintf("--web.listen-address=127.0.0.1:%d", port),
			"--storage.tsdb.retention.time=1h",
		)
		cmd.Stdout = p.stderr
		cmd.Stderr = p.stderr
		if err := cmd.Start(); err != nil {
			t.Fatalf("start %s: %v", bin, err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		stop := func() {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-exited:
			case <-time.After(10 * time.Second):
				_ = cmd.Process.Kill()
				<-exited
			}
		}
		if err := p.waitReady(exited, 30*time.Second); err != nil {
			stop()
			if attempt < 2 && strings.Contains(p.stderr.String(), "address already in use") {
				continue
			}
			t.Fatalf("prometheus did not become ready: %v\n%s", err, p.stderr.String())
		}
		t.Cleanup(func() {
			stop()
			if t.Failed() {
				t.Logf("prometheus log:\n%s", p.stderr.String())
			}
		})
		return p
	}
	t.Fatal("prometheus: no free port after 3 attempts")
	return nil
}

func (p *Prometheus) waitReady(exited <-chan error, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		select {
		case err := <-exited:
			return fmt.Errorf("prometheus exited: %v", err)
		default:
		}
		resp, err := http.Get(p.URL + "/-/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("not ready after %s", timeout)
}

// QueryError is an error Prometheus returned for a query; Type "bad_data" means the query
// does not parse (or is otherwise invalid), which no amount of waiting fixes.
type QueryError struct {
	Type, Msg string
}

func (e *QueryError) Error() string { return e.Type + ": " + e.Msg }

// Result is the decoded data of a successful query.
type Result struct {
	Type   string // vector, matrix, scalar, string
	Series int    // number of series (1 for a scalar)
}

func (p *Prometheus) get(ctx context.Context, path string, params url.Values) (json.RawMessage, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.URL+path+"?"+params.Encode(), nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("prometheus %s: %w", path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("prometheus %s: read: %w", path, err)
	}
	var env struct {
		Status    string          `json:"status"`
		Data      json.RawMessage `json:"data"`
		ErrorType string          `json:"errorType"`
		Error     string          `json:"error"`
	}
	if err := json.Unmarshal(body, &env); err != nil {
		return nil, fmt.Errorf("prometheus %s: %d %q: %w", path, resp.StatusCode, body, err)
	}
	if env.Status != "success" {
		return nil, &QueryError{Type: env.ErrorType, Msg: env.Error}
	}
	return env.Data, nil
}

func decodeResult(data json.RawMessage) (Result, error) {
	var d struct {
		ResultType string          `json:"resultType"`
		Result     json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal(data, &d); err != nil {
		return Result{}, err
	}
	r := Result{Type: d.ResultType}
	switch d.ResultType {
	case "vector", "matrix":
		var series []json.RawMessage
		if err := json.Unmarshal(d.Result, &series); err != nil {
			return Result{}, err
		}
		r.Series = len(series)
	default:
		r.Series = 1
	}
	return r, nil
}

// Query runs an instant query at now.
func (p *Prometheus) Query(ctx context.Context, expr string) (Result, error) {
	data, err := p.get(ctx, "/api/v1/query", url.Values{"query": {expr}})
	if err != nil {
		return Result{}, err
	}
	return decodeResult(data)
}

// QueryRange runs a range query over the last window at the given step.
func (p *Prometheus) QueryRange(ctx context.Context, expr string, window, step time.Duration) (Result, error) {
	end := time.Now()
	data, err := p.get(ctx, "/api/v1/query_range", url.Values{
		"query": {expr},
		"start": {fmt.Sprint(end.Add(-window).Unix())},
		"end":   {fmt.Sprint(end.Unix())},
		"step":  {fmt.Sprint(step.Seconds())},
	})
	if err != nil {
		return Result{}, err
	}
	return decodeResult(data)
}

// LabelValues returns the values of label on series matching match.
func (p *Prometheus) LabelValues(ctx context.Context, label, match string) ([]string, error) {
	data, err := p.get(ctx, "/api/v1/label/"+url.PathEscape(label)+"/values", url.Values{"match[]": {match}})
	if err != nil {
		return nil, err
	}
	var vs []string
	if err := json.Unmarshal(data, &vs); err != nil {
		return nil, err
	}
	return vs, nil
}

// check runs one target: it must parse and return at least one series, both as an
// instant query at now and as Grafana would run it (a range query for range targets).
func (p *Prometheus) check(ctx context.Context, tg Target, vars map[string]string) (retry bool, err error) {
	expr, err := Substitute(tg.Expr, vars)
	if err != nil {
		return false, err
	}
	r, err := p.Query(ctx, expr)
	if err != nil {
		var qe *QueryError
		return !errors.As(err, &qe) || qe.Type != "bad_data", fmt.Errorf("query %q: %w", expr, err)
	}
	if r.Series == 0 {
		return true, fmt.Errorf("query %q: empty result", expr)
	}
	if !tg.Instant {
		r, err := p.QueryRange(ctx, expr, time.Minute, time.Second)
		if err != nil {
			return true, fmt.Errorf("query_range %q: %w", expr, err)
		}
		if r.Series == 0 {
			return true, fmt.Errorf("query_range %q: empty result", expr)
		}
	}
	return false, nil
}

// Rule is one loaded rule as Prometheus reports it (GET /api/v1/rules).
type Rule struct {
	Group, Name, Type string // Type: alerting or recording
	Health            string // ok, err or unknown (not evaluated yet)
	LastError         string
	State             string // alerting rules: inactive, pending or firing
	Evaluated         bool   // evaluated at least once
}

// Rules lists the loaded rules with their health.
func (p *Prometheus) Rules(ctx context.Context) ([]Rule, error) {
	data, err := p.get(ctx, "/api/v1/rules", url.Values{})
	if err != nil {
		return nil, err
	}
	var d struct {
		Groups []struct {
			Name  string `json:"name"`
			Rules []struct {
				Name           string    `json:"name"`
				Type           string    `json:"type"`
				Health         string    `json:"health"`
				LastError      string    `json:"lastError"`
				State          string    `json:"state"`
				LastEvaluation time.Time `json:"lastEvaluation"`
			} `json:"rules"`
		} `json:"groups"`
	}
	if err := json.Unmarshal(data, &d); err != nil {
		return nil, fmt.Errorf("prometheus rules: %w", err)
	}
	var out []Rule
	for _, g := range d.Groups {
		for _, r := range g.Rules {
			out = append(out, Rule{Group: g.Name, Name: r.Name, Type: r.Type, Health: r.Health, LastError: r.LastError,
				State: r.State, Evaluated: !r.LastEvaluation.IsZero() && r.LastEvaluation.Year() > 1})
		}
	}
	return out, nil
}

// Value runs an instant query whose answer is one sample and returns its value.
func (p *Prometheus) Value(ctx context.Context, expr string) (float64, error) {
	data, err := p.get(ctx, "/api/v1/query", url.Values{"query": {expr}})
	if err != nil {
		return 0, err
	}
	var d struct {
		ResultType string `json:"resultType"`
		Result     []struct {
			Value [2]any `json:"value"`
		} `json:"result"`
	}
	if err := json.Unmarshal(data, &d); err != nil {
		return 0, err
	}
	if d.ResultType != "vector" || len(d.Result) != 1 {
		return 0, fmt.Errorf("query %q: %d samples (%s), want one", expr, len(d.Result), d.ResultType)
	}
	v, ok := d.Result[0].Value[1].(string)
	if !ok {
		return 0, fmt.Errorf("query %q: value %v", expr, d.Result[0].Value)
	}
	var f float64
	if _, err := fmt.Sscan(v, &f); err != nil {
		return 0, fmt.Errorf("query %q: value %q: %w", expr, v, err)
	}
	return f, nil
}

var labelValuesRE = regexp.MustCompile(`^\s*label_values\(\s*([^,]+?)\s*,\s*(\w+)\s*\)\s*$`)

// ScrapeAndCheck starts a private prometheus scraping targets, waits until each target has
// been scraped several times, then checks every panel target of the dashboard file (each
// must parse and return data, retried for up to a minute while the data fills in) and every
// label_values query variable (its values must include vars[name]). vars supplies the
// template variables; see DefaultVars.
func ScrapeAndCheck(t testing.TB, dashboardPath string, vars map[string]string, targets ...string) {
	t.Helper()
	ScrapeAndCheckWith(t, Check{Dashboard: dashboardPath, Vars: vars}, targets...)
}

// Check is what ScrapeAndCheckWith checks.
type Check struct {
	Dashboard string            // the dashboard file
	Vars      map[string]string // its template variables; see DefaultVars
	// Rules, when set, is a rule file Prometheus loads; every rule must then evaluate
	// without error on the scraped data.
	Rules string
}

// ScrapeAndCheckWith is ScrapeAndCheck with rules; it returns the Prometheus, which keeps
// scraping until the test ends, for further queries.
func ScrapeAndCheckWith(t testing.TB, c Check, targets ...string) *Prometheus {
	t.Helper()
	dashboardPath, vars := c.Dashboard, c.Vars
	b, err := os.ReadFile(dashboardPath)
	if err != nil {
		t.Fatal(err)
	}
	tgs, err := Targets(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(tgs) == 0 {
		t.Fatalf("%s has no panel targets", dashboardPath)
	}
	variables, err := Variables(b)
	if err != nil {
		t.Fatal(err)
	}

	var opts Options
	if c.Rules != "" {
		opts.RuleFiles = []string{c.Rules}
	}
	p := StartWith(t, opts, targets...)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	// Several scrapes of every target, so rate() over $__rate_interval has samples.
	want := len(targets)
	if err := poll(ctx, 30*time.Second, func() error {
		r, err := p.Query(ctx, `count_over_time(up{job="suitegen"}[1m]) >= 4 and up{job="suitegen"} == 1`)
		if err != nil {
			return err
		}
		if r.Series < want {
			return fmt.Errorf("%d of %d targets up with 4 scrapes", r.Series, want)
		}
		return nil
	}); err != nil {
		t.Fatalf("targets %v not scraped: %v", targets, err)
	}

	for _, v := range variables {
		m := labelValuesRE.FindStringSubmatch(v.Query)
		if v.Type != "query" || m == nil {
			continue
		}
		if err := poll(ctx, 20*time.Second, func() error {
			vals, err := p.LabelValues(ctx, m[2], m[1])
			if err != nil {
				return err
			}
			for _, val := range vals {
				if val == vars[v.Name] {
					return nil
				}
			}
			return fmt.Errorf("values %v lack %q", vals, vars[v.Name])
		}); err != nil {
			t.Errorf("variable %s (%s): %v", v.Name, v.Query, err)
		}
	}

	pending := tgs
	deadline := time.Now().Add(time.Minute)
	for {
		var again []Target
		var errs []error
		for _, tg := range pending {
			retry, err := p.check(ctx, tg, vars)
			switch {
			case err == nil:
			case retry && time.Now().Before(deadline):
				again = append(again, tg)
				errs = append(errs, err)
			default:
				t.Errorf("panel target %s: %v", tg, err)
			}
		}
		if len(again) == 0 {
			break
		}
		if ctx.Err() != nil {
			for i, tg := range again {
				t.Errorf("panel target %s: %v", tg, errs[i])
			}
			break
		}
		pending = again
		time.Sleep(time.Second)
	}
	t.Logf("checked %d panel targets of %s against prometheus", len(tgs), dashboardPath)
	if c.Rules != "" {
		checkRules(ctx, t, p, c.Rules)
	}
	return p
}

// checkRules waits until every loaded rule has been evaluated and requires none to fail.
func checkRules(ctx context.Context, t testing.TB, p *Prometheus, file string) {
	t.Helper()
	var rules []Rule
	err := poll(ctx, 30*time.Second, func() error {
		var err error
		if rules, err = p.Rules(ctx); err != nil {
			return err
		}
		if len(rules) == 0 {
			return fmt.Errorf("no rules loaded from %s", file)
		}
		for _, r := range rules {
			if !r.Evaluated || r.Health == "unknown" {
				return fmt.Errorf("rule %s not evaluated yet", r.Name)
			}
		}
		return nil
	})
	if err != nil {
		t.Errorf("rules of %s: %v", file, err)
		return
	}
	for _, r := range rules {
		if r.Health != "ok" || r.LastError != "" {
			t.Errorf("rule %s of %s: health %s: %s", r.Name, file, r.Health, r.LastError)
		}
	}
	t.Logf("evaluated %d rules of %s against the scraped data", len(rules), file)
}

func poll(ctx context.Context, timeout time.Duration, f func() error) error {
	deadline := time.Now().Add(timeout)
	for {
		err := f()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return err
		}
		time.Sleep(250 * time.Millisecond)
	}
}
