package main

import (
	"fmt"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/suitegen/suitegen/pkg/ledger"
)

// Rule is one alerting rule, as Prometheus's rule files and the PrometheusRule CRD spell it.
type Rule struct {
	Alert       string            `json:"alert"`
	Expr        string            `json:"expr"`
	For         string            `json:"for,omitempty"`
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
}

// Group is a named group of rules.
type Group struct {
	Name  string `json:"name"`
	Rules []Rule `json:"rules"`
}

// unfinished matches the run states in which a run is still being written.
func unfinished() string {
	var s []string
	for _, st := range ledger.RunStates {
		if ledger.RunState(st).Live() {
			s = append(s, st)
		}
	}
	return strings.Join(s, "|")
}

// Thresholds of the alerts (the expressions and their documentation use these).
const (
	stallSeconds   = 900 // a run idle this long is stalled
	rateLimitShare = 0.2 // share of provider calls answered 429
	budgetLeft     = 0.1 // share of the token cap left
)

// Groups are the alert rules shipped with the dashboard. Run-level rules read the ledger's
// run figures (suitegen serve), so they hold after pods scale away; the 429 and readiness
// rules read the writer pods' own series.
func Groups() []Group {
	live := fmt.Sprintf(`max by (run) (suitegen_run_state{state=~"%s"}) == 1`, unfinished())
	warn := map[string]string{"severity": "warning"}
	return []Group{{Name: "suitegen", Rules: []Rule{
		{
			Alert: "SuitegenRunStalled",
			Expr:  fmt.Sprintf(`(time() - max by (run) (suitegen_run_last_activity_timestamp_seconds)) > %d and on (run) (%s)`, stallSeconds, live),
			For:   "5m", Labels: warn,
			Annotations: map[string]string{
				"summary":     "Run {{ $labels.run }} has had no ledger activity for {{ $value | humanizeDuration }}",
				"description": "The run is unfinished but no slice was dealt or finished, no scenario journalled and no refusal or model call recorded for a while: its planner and writers died or were stopped, or every writer is stuck. Resume it with the same --run, or look at the writers and the queue.",
			},
		},
		{
			Alert:  "SuitegenSlicesDead",
			Expr:   fmt.Sprintf(`max by (run, cause) (suitegen_run_slices_dead) > 0 and on (run) (%s)`, live),
			Labels: warn,
			Annotations: map[string]string{
				"summary":     "Run {{ $labels.run }} has {{ $value }} dead slices ({{ $labels.cause }})",
				"description": "Slices ran out of deliveries: 'failed' means a writer's last delivery failed with an error (a bad key, a provider outage, a contract that crashes), 'lost' that no writer finished them (writers killed, or silent past the ack wait). The progress page lists each reason; their buckets are retried next round or blocked.",
			},
		},
		{
			Alert: "SuitegenRateLimited",
			Expr: fmt.Sprintf(`sum by (model) (rate(suitegen_model_rate_limited_total[10m])) / sum by (model) (rate(suitegen_model_calls_total[10m])) > %g`,
				rateLimitShare),
			For: "10m", Labels: warn,
			Annotations: map[string]string{
				"summary":     "{{ $value | humanizePercentage }} of calls to {{ $labels.model }} are answered 429",
				"description": "The provider rate-limits the writers. Each 429 is waited out and retried, so nothing is lost, but the quota (--rpm/--tpm) is set above what the provider grants, or another client shares the key.",
			},
		},
		{
			Alert: "SuitegenBudgetNearCap",
			Expr: fmt.Sprintf(`max by (run) (suitegen_run_budget_remaining_tokens) / max by (run) (suitegen_run_budget_cap_tokens) < %g and on (run) (%s)`,
				budgetLeft, live),
			Labels: warn,
			Annotations: map[string]string{
				"summary":     "Run {{ $labels.run }} has {{ $value | humanizePercentage }} of its token cap left",
				"description": "Dispatch stops at the cap (--budget-tokens) and the run ends short of its ask. Raise the cap and resume, or accept a shorter suite.",
			},
		},
		{
			Alert: "SuitegenWritersNotReady",
			Expr:  `count(suitegen_ready{role="writer"} == 0) > 0`,
			For:   "10m", Labels: warn,
			Annotations: map[string]string{
				"summary":     "{{ $value }} writer pods run but are not ready",
				"description": "Their /readyz answers 503 (the ledger or NATS unreachable, or the provider refusing the key). They take no work; read the reason from a pod's /readyz.",
			},
		},
		{
			Alert: "SuitegenNoReadyWriter",
			Expr:  fmt.Sprintf(`(sum(suitegen_ready{role="writer"}) or vector(0)) == 0 and on () (max(suitegen_run_state{state="%s"}) == 1)`, ledger.RunWriting),
			For:   "5m", Labels: map[string]string{"severity": "critical"},
			Annotations: map[string]string{
				"summary":     "A run is writing and no writer is ready",
				"description": "No writer pod is scraped ready while a run waits for its slices: the run cannot move. Check the writer Deployment (and KEDA's ScaledObject).",
			},
		},
		{
			Alert: "SuitegenLedgerExporterDown",
			Expr:  `max(suitegen_ledger_up) == 0 or absent(suitegen_ledger_up)`,
			For:   "10m", Labels: warn,
			Annotations: map[string]string{
				"summary":     "No run figures are read from the ledger",
				"description": "suitegen serve is not scraped or cannot read the ledger: the dashboard's run panels and the run alerts are blind. Check the serve Deployment and its database URL.",
			},
		},
	}}}
}

const generatedHeader = "# Generated by `go run ./deploy/grafana/gen`; edit deploy/grafana/gen/alerts.go, not this file.\n"

// RuleFile is the rule groups as a Prometheus rule file (rule_files in prometheus.yml).
func RuleFile() ([]byte, error) {
	b, err := yaml.Marshal(map[string]any{"groups": Groups()})
	if err != nil {
		return nil, fmt.Errorf("encode rules: %w", err)
	}
	return append([]byte(generatedHeader+"# The alerts of docs/METRICS.md, for a Prometheus without the operator.\n"), b...), nil
}

// PrometheusRule is the rule groups as a prometheus-operator PrometheusRule.
func PrometheusRule() ([]byte, error) {
	b, err := yaml.Marshal(map[string]any{
		"apiVersion": "monitoring.coreos.com/v1",
		"kind":       "PrometheusRule",
		"metadata": map[string]any{
			"name": "suitegen",
			// The label kube-prometheus-stack's Prometheus selects rules by, as for the ServiceMonitors.
			"labels": map[string]string{"release": "kube-prometheus-stack"},
		},
		"spec": map[string]any{"groups": Groups()},
	})
	if err != nil {
		return nil, fmt.Errorf("encode PrometheusRule: %w", err)
	}
	return append([]byte(generatedHeader+"# The same groups as deploy/grafana/alerts.yaml, for prometheus-operator.\n"), b...), nil
}
