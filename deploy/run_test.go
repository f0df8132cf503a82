package deploy

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// buildRun builds runDir with run.env replaced by env, in memory, as docs/DEPLOY.md has an
// operator start a new run: write run.env, apply the run.
func buildRun(t *testing.T, env string, schemas map[string]*jsonschema.Schema) []object {
	t.Helper()
	mem := filesys.MakeFsInMemory()
	err := filepath.WalkDir(runDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if filepath.Base(p) == "run.env" {
			b = []byte(env)
		}
		return mem.WriteFile(filepath.Join("/", p), b)
	})
	if err != nil {
		t.Fatal(err)
	}
	m, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(mem, filepath.Join("/", runDir))
	if err != nil {
		t.Fatalf("kustomize build %s with run.env %q: %v", runDir, env, err)
	}
	var out []object
	for _, r := range m.Resources() {
		b, err := r.AsYAML()
		if err != nil {
			t.Fatal(err)
		}
		o, err := decode(t, b, schemas)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, o)
	}
	return out
}

// TestNewRunLeavesTheLastOne: a run is its run.env; another run (another id and size) builds
// Jobs and a ConfigMap of other names, so applying it creates them beside the last run's,
// which nobody has to delete, and changes nothing an overlay made. The Jobs take the id and
// size from the run's own ConfigMap, and what every process shares from the overlay's
// suitegen-shared, whose name has no hash.
func TestNewRunLeavesTheLastOne(t *testing.T) {
	schemas := loadSchemas(t)
	first := build(t, runDir, schemas)
	env := readEnv(t, filepath.Join(runDir, "run.env"))
	if env["SUITEGEN_RUN"] == "" || env["SUITEGEN_SCENARIOS"] == "" {
		t.Fatalf("%s/run.env lacks the run id or size: %v", runDir, env)
	}
	second := buildRun(t, "SUITEGEN_RUN=suite-2\nSUITEGEN_SCENARIOS=2000\n", schemas)
	for _, run := range []struct {
		objs      []object
		id, count string
	}{{first, env["SUITEGEN_RUN"], env["SUITEGEN_SCENARIOS"]}, {second, "suite-2", "2000"}} {
		for _, role := range []string{"planner", "reviewer"} {
			j := jobOf(run.objs, role)
			if j == nil || j.Name != role+"-"+run.id {
				t.Fatalf("run %s: %s Job %v, want %s-%s", run.id, role, j, role, run.id)
			}
			if got := jobEnv(run.objs, j)["SUITEGEN_RUN"]; got != run.id {
				t.Errorf("%s reads SUITEGEN_RUN %q", j.Name, got)
			}
			if a, _ := flagValue(j.Spec.Template.Spec.Containers[0].Args, "--run"); a != "$(SUITEGEN_RUN)" {
				t.Errorf("%s --run %q, want $(SUITEGEN_RUN)", j.Name, a)
			}
		}
		p := jobOf(run.objs, "planner")
		if got := jobEnv(run.objs, p)["SUITEGEN_SCENARIOS"]; got != run.count {
			t.Errorf("%s reads SUITEGEN_SCENARIOS %q, want %s", p.Name, got, run.count)
		}
		if s := jobOf(run.objs, "reviewer").Spec.Suspend; s == nil || !*s {
			t.Error("the reviewer Job starts before the planner has finished")
		}
	}
	names := func(objs []object) []string {
		var out []string
		for _, o := range objs {
			out = append(out, o.kind+"/"+o.name)
		}
		return out
	}
	for _, n := range names(second) {
		if slices.Contains(names(first), n) {
			t.Errorf("the second run rewrites %s of the first: kubectl apply would change an immutable Job", n)
		}
	}
	// Nothing of the run is made by an overlay, and the run refers to an overlay's objects
	// only by names that have no hash.
	for _, dir := range overlays(t) {
		overlay := build(t, dir, schemas)
		for _, n := range names(first) {
			if slices.Contains(names(overlay), n) {
				t.Errorf("%s and %s both make %s", dir, runDir, n)
			}
		}
		for _, role := range []string{"planner", "reviewer"} {
			for _, e := range jobOf(first, role).Spec.Template.Spec.Containers[0].EnvFrom {
				if e.ConfigMapRef == nil || find[corev1.ConfigMap](first, "ConfigMap", e.ConfigMapRef.Name) != nil {
					continue
				}
				if find[corev1.ConfigMap](overlay, "ConfigMap", e.ConfigMapRef.Name) == nil {
					t.Errorf("%s's %s reads ConfigMap %s, which %s does not make under that name", runDir, role, e.ConfigMapRef.Name, dir)
				}
			}
		}
	}
	// The run id names Jobs and a pod label: a DNS label of at most 63 characters with the
	// longest role prefix, as run.env says.
	if m := regexp.MustCompile(`at most (\d+) characters`).FindStringSubmatch(readFile(t, filepath.Join(runDir, "run.env"))); m == nil || m[1] != "54" {
		t.Errorf("run.env does not give the longest run id as 54 characters (63 - len(\"reviewer-\")): %v", m)
	}
}

// jobEnv is what a Job's container reads from the ConfigMaps of objs it takes in envFrom.
func jobEnv(objs []object, j *batchv1.Job) map[string]string {
	out := map[string]string{}
	for _, e := range j.Spec.Template.Spec.Containers[0].EnvFrom {
		if e.ConfigMapRef == nil {
			continue
		}
		if cm := find[corev1.ConfigMap](objs, "ConfigMap", e.ConfigMapRef.Name); cm != nil {
			for k, v := range cm.Data {
				out[strings.TrimSpace(e.Prefix)+k] = v
			}
		}
	}
	return out
}
