package deploy

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"

	"sigs.k8s.io/yaml"
)

// promtool finds Prometheus's promtool (installed with it by deploy/install-prometheus.sh).
// Without it the test skips, unless CI is set, where it fails.
func promtool(t *testing.T) string {
	t.Helper()
	for _, p := range []string{os.Getenv("SUITEGEN_PROMTOOL"), "promtool", "/usr/bin/promtool"} {
		if p == "" {
			continue
		}
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("promtool not found and CI is set: run deploy/install-prometheus.sh")
	}
	t.Skip("promtool not found (run deploy/install-prometheus.sh); skipping the alert rule tests")
	return ""
}

// TestAlertRules: the rule file parses as Prometheus parses it (every expression, duration
// and template), and each alert fires on its case and not on the look-alikes, by the unit
// tests of deploy/grafana/alerts_test.yaml.
func TestAlertRules(t *testing.T) {
	bin := promtool(t)
	for _, args := range [][]string{{"check", "rules", "alerts.yaml"}, {"test", "rules", "alerts_test.yaml"}} {
		cmd := exec.Command(bin, args...)
		cmd.Dir = filepath.Join("grafana")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("promtool %v: %v\n%s", args, err, out)
		} else {
			t.Logf("promtool %v:\n%s", args, out)
		}
	}
}

// TestPrometheusRuleMatchesRuleFile: the operator's PrometheusRule carries exactly the groups
// of deploy/grafana/alerts.yaml (both are generated; this holds them to it on disk).
func TestPrometheusRuleMatchesRuleFile(t *testing.T) {
	var file struct {
		Groups []any `json:"groups"`
	}
	var pr struct {
		Spec struct {
			Groups []any `json:"groups"`
		} `json:"spec"`
	}
	for path, v := range map[string]any{"grafana/alerts.yaml": &file, "k8s/components/monitoring/prometheusrule.yaml": &pr} {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := yaml.Unmarshal(b, v); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}
	if len(file.Groups) == 0 || !reflect.DeepEqual(file.Groups, pr.Spec.Groups) {
		t.Errorf("the PrometheusRule's groups differ from deploy/grafana/alerts.yaml (run go run ./deploy/grafana/gen)")
	}
}
