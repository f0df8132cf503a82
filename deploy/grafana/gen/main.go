// Command gen writes the suitegen Grafana dashboard, deploy/grafana/suitegen.json, and its
// copy inside the kustomize base (kustomize cannot read files outside its root), and the
// alert rules beside it: deploy/grafana/alerts.yaml (a Prometheus rule file) and the same
// groups as a prometheus-operator PrometheusRule in deploy/k8s/components/monitoring. They
// are generated rather than hand-edited so that panel ids and grid positions stay consistent
// and the two rule files cannot drift; TestGenerated fails when a committed file differs from
// what gen writes.
//
//	go run ./deploy/grafana/gen        # from the repository root
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"os"
)

// Outputs are the dashboard files gen writes, relative to the repository root.
var Outputs = []string{"deploy/grafana/suitegen.json", "deploy/k8s/base/dashboards/suitegen.json"}

// Rule files gen writes, relative to the repository root.
const (
	RulesOutput          = "deploy/grafana/alerts.yaml"
	PrometheusRuleOutput = "deploy/k8s/components/monitoring/prometheusrule.yaml"
)

// Files returns every file gen writes, by path relative to the repository root.
func Files() (map[string][]byte, error) {
	d, err := Dashboard()
	if err != nil {
		return nil, err
	}
	rules, err := RuleFile()
	if err != nil {
		return nil, err
	}
	pr, err := PrometheusRule()
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{RulesOutput: rules, PrometheusRuleOutput: pr}
	for _, o := range Outputs {
		out[o] = d
	}
	return out, nil
}

func main() {
	root := flag.String("root", ".", "repository root")
	flag.Parse()
	files, err := Files()
	if err != nil {
		slog.Error("build dashboard and rules", "err", err)
		os.Exit(1)
	}
	for out, b := range files {
		path := *root + "/" + out
		if err := os.WriteFile(path, b, 0o644); err != nil {
			slog.Error("write", "path", path, "err", err)
			os.Exit(1)
		}
	}
}

type ref struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

// ds is the datasource of every panel and target: the dashboard's template variable.
var ds = ref{Type: "prometheus", UID: "${datasource}"}

type target struct {
	Datasource   ref    `json:"datasource"`
	RefID        string `json:"refId"`
	Expr         string `json:"expr"`
	LegendFormat string `json:"legendFormat"`
	Range        bool   `json:"range"`
	Instant      bool   `json:"instant"`
}

type gridPos struct {
	H int `json:"h"`
	W int `json:"w"`
	X int `json:"x"`
	Y int `json:"y"`
}

type panel struct {
	ID          int            `json:"id"`
	Type        string         `json:"type"`
	Title       string         `json:"title"`
	Description string         `json:"description,omitempty"`
	Datasource  *ref           `json:"datasource,omitempty"`
	GridPos     gridPos        `json:"gridPos"`
	Collapsed   *bool          `json:"collapsed,omitempty"`
	Panels      []panel        `json:"panels,omitempty"`
	Targets     []target       `json:"targets,omitempty"`
	FieldConfig map[string]any `json:"fieldConfig,omitempty"`
	Options     map[string]any `json:"options,omitempty"`
}

type q struct{ expr, legend string }

const sel = `run=~"$run"`

// layout places panels left to right in rows of 24 grid units.
type layout struct {
	panels []panel
	id     int
	x, y   int
	rowH   int
}

func (l *layout) row(title string) {
	if l.x > 0 {
		l.y += l.rowH
		l.x = 0
	}
	l.id++
	f := false
	l.panels = append(l.panels, panel{ID: l.id, Type: "row", Title: title, Collapsed: &f, GridPos: gridPos{H: 1, W: 24, X: 0, Y: l.y}})
	l.y++
	l.rowH = 0
}

func (l *layout) add(typ, title, desc, unit string, w int, qs []q, extra func(*panel)) {
	const h = 8
	if l.x+w > 24 {
		l.y += l.rowH
		l.x = 0
	}
	l.id++
	p := panel{
		ID: l.id, Type: typ, Title: title, Description: desc, Datasource: &ds,
		GridPos: gridPos{H: h, W: w, X: l.x, Y: l.y},
		FieldConfig: map[string]any{
			"defaults":  map[string]any{"unit": unit},
			"overrides": []any{},
		},
		Options: map[string]any{
			"legend":  map[string]any{"displayMode": "list", "placement": "bottom", "showLegend": true},
			"tooltip": map[string]any{"mode": "multi", "sort": "desc"},
		},
	}
	for i, qq := range qs {
		p.Targets = append(p.Targets, target{Datasource: ds, RefID: string(rune('A' + i)), Expr: qq.expr, LegendFormat: qq.legend, Range: true})
	}
	if extra != nil {
		extra(&p)
	}
	l.panels = append(l.panels, p)
	l.x += w
	l.rowH = max(l.rowH, h)
}

func quantiles(metric string, qs ...string) []q {
	var out []q
	for _, p := range qs {
		out = append(out, q{
			fmt.Sprintf(`histogram_quantile(0.%s, sum by (run, le) (rate(%s_bucket{%s}[$__rate_interval])))`, p, metric, sel),
			"{{run}} p" + p,
		})
	}
	return out
}

func stat(p *panel) {
	p.Options = map[string]any{
		"colorMode": "value", "graphMode": "area", "justifyMode": "auto", "textMode": "auto",
		"reduceOptions": map[string]any{"calcs": []string{"lastNotNull"}, "fields": "", "values": false},
	}
}

func stacked(p *panel) {
	d := p.FieldConfig["defaults"].(map[string]any)
	d["custom"] = map[string]any{"stacking": map[string]any{"mode": "normal", "group": "A"}, "fillOpacity": 40}
}

func instant(p *panel) {
	for i := range p.Targets {
		p.Targets[i].Range = false
		p.Targets[i].Instant = true
	}
	p.Options = map[string]any{
		"displayMode": "gradient", "orientation": "horizontal", "showUnfilled": true,
		"reduceOptions": map[string]any{"calcs": []string{"lastNotNull"}, "fields": "", "values": false},
	}
}

// Dashboard returns the dashboard JSON, indented, with a trailing newline.
//
// Run-level panels (progress, states, refusals, spend, dead slices) read the run figures
// suitegen serve exports from the ledger (suitegen_run_*), as max by run: they are the run's
// totals whatever pods come and go, and two exporters of one ledger agree. Per-pod panels
// (throughput per writer, latencies, the provider, the queue) read the processes' own series.
func Dashboard() ([]byte, error) {
	var l layout

	l.row("Run (from the ledger)")
	l.add("stat", "Proved vs asked", "Scenarios proved and journalled in the ledger against the run's target (suitegen serve reads them from the ledger, so writer pods that come and go and a planner Job that ended do not change them).", "short", 6, []q{
		{`max by (run) (suitegen_run_scenarios_proved_total{` + sel + `})`, "{{run}} proved"},
		{`max by (run) (suitegen_run_scenarios_asked{` + sel + `})`, "{{run}} asked"},
	}, stat)
	l.add("stat", "Run state", "The run's state in the ledger.", "short", 4, []q{
		{`max by (run, state) (suitegen_run_state{` + sel + `}) == 1`, "{{run}}: {{state}}"},
	}, func(p *panel) { stat(p); p.Options["textMode"] = "name"; p.Options["graphMode"] = "none" })
	l.add("stat", "Idle for", "Time since the run's last ledger write (a slice dealt or finished, a scenario, a refusal, a model call). An unfinished run idle for long is stalled: its processes stopped, or none can work.", "s", 4, []q{
		{`time() - max by (run) (suitegen_run_last_activity_timestamp_seconds{` + sel + `})`, "{{run}}"},
	}, func(p *panel) { stat(p); p.Options["graphMode"] = "none" })
	l.add("stat", "Elapsed", "Time since the run was created (to its end once finished).", "s", 4, []q{
		{`max by (run) (suitegen_run_finished_timestamp_seconds{` + sel + `}) - max by (run) (suitegen_run_started_timestamp_seconds{` + sel + `})` +
			` or time() - max by (run) (suitegen_run_started_timestamp_seconds{` + sel + `})`, "{{run}}"},
	}, func(p *panel) { stat(p); p.Options["graphMode"] = "none" })
	l.add("stat", "Dead slices", "Slices no writer could finish, by cause: failed (a writer's last delivery failed with an error) or lost (no writer finished it). The progress page lists the reasons.", "short", 6, []q{
		{`max by (run, cause) (suitegen_run_slices_dead{` + sel + `})`, "{{cause}}"},
	}, func(p *panel) { stat(p); p.Options["graphMode"] = "none" })
	l.add("timeseries", "Throughput (proved / min)", "Scenarios proved per minute: the run's total from the ledger, and per writer pod (instance) from the pods' own counters.", "short", 12, []q{
		{`max by (run) (rate(suitegen_run_scenarios_proved_total{` + sel + `}[$__rate_interval])) * 60`, "{{run}} total"},
		{`sum by (run, instance) (rate(suitegen_scenarios_proved_total{` + sel + `, role="writer"}[$__rate_interval])) * 60`, "{{instance}}"},
	}, nil)
	l.add("timeseries", "Buckets by state", "Plan buckets in the ledger by state, at every scrape; blocked buckets are what the agent does not support.", "short", 6, []q{
		{`max by (run, state) (suitegen_run_buckets{` + sel + `})`, "{{state}}"},
	}, stacked)
	l.add("timeseries", "Slices by state", "Slices in the ledger by state: published (dealt, not finished), done, dead.", "short", 6, []q{
		{`max by (run, state) (suitegen_run_slices{` + sel + `})`, "{{state}}"},
	}, stacked)

	l.row("Quality and budget")
	l.add("timeseries", "Refusals by reason", "Gate refusals per interval, by gate and code, from the ledger (every documented code is there at 0 before its first refusal).", "short", 12, []q{
		{`max by (run, gate, code) (increase(suitegen_run_scenarios_refused_total{` + sel + `}[$__rate_interval]))`, "{{gate}} / {{code}}"},
	}, func(p *panel) {
		stacked(p)
		p.Options["legend"] = map[string]any{"displayMode": "table", "placement": "right", "showLegend": true, "calcs": []string{"sum"}, "sortBy": "Total", "sortDesc": true}
	})
	l.add("bargauge", "Refusals over the range", "The ten most frequent gate refusals over the dashboard's time range, by gate and code.", "short", 12, []q{
		{`topk(10, max by (run, gate, code) (increase(suitegen_run_scenarios_refused_total{` + sel + `}[$__range])))`, "{{gate}} / {{code}}"},
	}, instant)
	l.add("timeseries", "Spend and budget", "Tokens the ledger metered for the run (prompt and completion, including calls of slices that later failed) against its cap; a cap of 0 means none.", "short", 8, []q{
		{`sum by (run) (max by (run, kind) (suitegen_run_spent_tokens_total{` + sel + `}))`, "{{run}} spent"},
		{`max by (run, kind) (suitegen_run_spent_tokens_total{` + sel + `})`, "{{run}} {{kind}}"},
		{`max by (run) (suitegen_run_budget_cap_tokens{` + sel + `})`, "{{run}} cap"},
	}, nil)
	l.add("timeseries", "Proof latency", "Wall time of one scenario's gate proofs (p50, p95, p99), per writer pods.", "s", 8, quantiles("suitegen_proof_duration_seconds", "50", "95", "99"), nil)
	l.add("timeseries", "Ledger write latency", "Wall time of one ledger write transaction.", "s", 8, quantiles("suitegen_ledger_write_duration_seconds", "50", "95", "99"), nil)
	l.add("stat", "Suite re-proved", "For a run over a written suite (run --update, run --into, revise): its scenarios re-proved against the contract before the run, fresh (still prove) or stale (refused now). 0 for any other run.", "short", 8, []q{
		{`max by (run, result) (suitegen_scenarios_reproved_total{` + sel + `, role="planner"})`, "{{run}} {{result}}"},
	}, func(p *panel) { stat(p); p.Options["graphMode"] = "none" })

	l.row("Model provider")
	l.add("timeseries", "Tokens / min vs quota", "Tokens used per minute by kind, against the tokens-per-minute quota the shared limiter enforces.", "short", 8, []q{
		{`sum by (run, kind) (rate(suitegen_model_tokens_total{` + sel + `}[$__rate_interval])) * 60`, "{{kind}}"},
		{`sum by (run) (rate(suitegen_model_tokens_total{` + sel + `}[$__rate_interval])) * 60`, "total"},
		{`max(suitegen_limiter_tokens_per_minute_quota)`, "quota"},
	}, nil)
	l.add("timeseries", "Requests / min vs quota", "Model calls per minute by outcome, against the requests-per-minute quota.", "short", 8, []q{
		{`sum by (run, outcome) (rate(suitegen_model_calls_total{` + sel + `}[$__rate_interval])) * 60`, "{{outcome}}"},
		{`max(suitegen_limiter_requests_per_minute_quota)`, "quota"},
	}, nil)
	l.add("timeseries", "Rate limited (429s)", "Provider 429 answers per interval; each is waited out and retried, never a failed slice.", "short", 8, []q{
		{`sum by (run, model) (increase(suitegen_model_rate_limited_total{` + sel + `}[$__rate_interval]))`, "{{model}}"},
	}, nil)
	// The provider bucket is shared by every run, so its series carry no run
	// label and these panels ignore the run picker.
	l.add("timeseries", "Limiter headroom", "Tokens and requests left in the shared provider bucket (lowest across processes; every run shares it).", "short", 8, []q{
		{`min(suitegen_limiter_tokens_available)`, "tokens available"},
		{`min(suitegen_limiter_requests_available)`, "requests available"},
	}, nil)
	l.add("timeseries", "Limiter wait", "Time writers wait for provider tokens before a call (every run shares the bucket).", "s", 8, []q{
		{`histogram_quantile(0.50, sum by (le) (rate(suitegen_limiter_wait_seconds_bucket[$__rate_interval])))`, "p50"},
		{`histogram_quantile(0.95, sum by (le) (rate(suitegen_limiter_wait_seconds_bucket[$__rate_interval])))`, "p95"},
	}, nil)
	l.add("timeseries", "Model call latency", "Wall time of one provider call.", "s", 8, quantiles("suitegen_model_call_duration_seconds", "50", "95", "99"), nil)

	l.row("Writers and queue")
	l.add("timeseries", "Writers ready", "Writer pods scraped, and those ready to work (what /readyz answers): a gap between the two is writers that run but cannot work.", "short", 8, []q{
		{`count(suitegen_ready{role="writer"})`, "writers"},
		{`sum(suitegen_ready{role="writer"})`, "ready"},
	}, nil)
	l.add("timeseries", "Queue lag", "Slices waiting for the writers consumer (num_pending, what KEDA scales on) and delivered but unacked (ack_pending).", "short", 8, []q{
		{`max by (run) (suitegen_queue_pending_messages{` + sel + `})`, "pending"},
		{`max by (run) (suitegen_queue_ack_pending_messages{` + sel + `})`, "ack pending"},
	}, nil)
	l.add("timeseries", "Slices in flight", "Slices held by writers right now.", "short", 8, []q{
		{`sum by (run) (suitegen_slices_in_flight{` + sel + `})`, "in flight"},
		{`sum by (run, instance) (suitegen_slices_in_flight{` + sel + `, role="writer"})`, "{{instance}}"},
	}, nil)
	l.add("timeseries", "Slices published, acked, redelivered, dead-lettered", "Per interval, as the processes counted them.", "short", 8, []q{
		{`sum by (run) (increase(suitegen_slices_published_total{` + sel + `}[$__rate_interval]))`, "published"},
		{`sum by (run) (increase(suitegen_slices_acked_total{` + sel + `}[$__rate_interval]))`, "acked"},
		{`sum by (run) (increase(suitegen_slices_redelivered_total{` + sel + `}[$__rate_interval]))`, "redelivered"},
		{`sum by (run) (increase(suitegen_slices_dead_lettered_total{` + sel + `}[$__rate_interval]))`, "dead-lettered"},
	}, nil)
	l.add("timeseries", "Acks retried", "Per interval, slice acks that met a transient failure (a JetStream leader election, a reconnect), by how they ended: confirmed on a later try, or gave up (the slice is done in the ledger: should it come back, it is acked without work).", "short", 8, []q{
		{`sum by (run, outcome) (increase(suitegen_acks_retried_total{` + sel + `, role="writer"}[$__rate_interval]))`, "{{outcome}}"},
	}, nil)

	d := map[string]any{
		"annotations":          map[string]any{"list": []any{}},
		"description":          "suitegen: a run's progress, states, refusals and spend from the ledger; throughput, provider quota, queue and latencies from the pods.",
		"editable":             true,
		"fiscalYearStartMonth": 0,
		"graphTooltip":         1,
		"links":                []any{},
		"panels":               l.panels,
		"refresh":              "30s",
		"schemaVersion":        39,
		"tags":                 []string{"suitegen"},
		"templating": map[string]any{"list": []any{
			map[string]any{
				"name": "datasource", "label": "Data source", "type": "datasource",
				"query": "prometheus", "current": map[string]any{}, "hide": 0,
				"includeAll": false, "multi": false, "options": []any{}, "refresh": 1, "regex": "",
			},
			map[string]any{
				"name": "run", "label": "Run", "type": "query", "datasource": ds,
				"definition": "label_values(suitegen_run_scenarios_asked, run)",
				"query":      map[string]any{"query": "label_values(suitegen_run_scenarios_asked, run)", "refId": "run"},
				"current":    map[string]any{}, "hide": 0, "includeAll": true, "allValue": ".*",
				"multi": true, "options": []any{}, "refresh": 2, "regex": "", "sort": 1,
			},
		}},
		"time":       map[string]any{"from": "now-3h", "to": "now"},
		"timepicker": map[string]any{},
		"timezone":   "",
		"title":      "suitegen",
		"uid":        "suitegen",
		"version":    1,
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(d); err != nil {
		return nil, fmt.Errorf("encode dashboard: %w", err)
	}
	return buf.Bytes(), nil
}
