package deploy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/kustomize/api/krusty"

	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

const namespace = "suitegen"

// Secrets the manifests use, each made by hand as docs/DEPLOY.md says, except that in
// production the CloudNativePG operator makes operatorSecrets itself (the small overlay's
// stand-in database needs them made by hand).
var expectedSecrets = []string{"suitegen-secrets", "nats-tls", "ledger-app", "ledger-ca", "ledger-backup", "postgres-auth", "postgres-tls"}

// operatorSecrets are what CloudNativePG makes for the Cluster ledger: <cluster>-app (the
// application role's credentials and URLs) and <cluster>-ca (the CA of its server certificates).
var operatorSecrets = []string{ledgerCluster + "-app", ledgerCluster + "-ca"}

// ledgerCluster is the name of the production overlay's CloudNativePG Cluster.
const ledgerCluster = "ledger"

// runDir is the kustomization of one run (its planner and reviewer Jobs), applied beside
// whichever overlay is deployed.
const runDir = "k8s/run"

// object is one decoded manifest.
type object struct {
	kind, name, ns string
	typed          any // pointer to the k8s.io/api type, or map[string]any for CRD kinds
}

// typedKinds maps apiVersion/kind to a constructor of its k8s.io/api type.
var typedKinds = map[string]func() any{
	"v1/Namespace":                             func() any { return &corev1.Namespace{} },
	"v1/ServiceAccount":                        func() any { return &corev1.ServiceAccount{} },
	"v1/Service":                               func() any { return &corev1.Service{} },
	"v1/ConfigMap":                             func() any { return &corev1.ConfigMap{} },
	"v1/Secret":                                func() any { return &corev1.Secret{} },
	"v1/PersistentVolumeClaim":                 func() any { return &corev1.PersistentVolumeClaim{} },
	"v1/Pod":                                   func() any { return &corev1.Pod{} },
	"apps/v1/Deployment":                       func() any { return &appsv1.Deployment{} },
	"apps/v1/StatefulSet":                      func() any { return &appsv1.StatefulSet{} },
	"batch/v1/Job":                             func() any { return &batchv1.Job{} },
	"networking.k8s.io/v1/NetworkPolicy":       func() any { return &networkingv1.NetworkPolicy{} },
	"policy/v1/PodDisruptionBudget":            func() any { return &policyv1.PodDisruptionBudget{} },
	"rbac.authorization.k8s.io/v1/Role":        func() any { return &rbacv1.Role{} },
	"rbac.authorization.k8s.io/v1/RoleBinding": func() any { return &rbacv1.RoleBinding{} },
}

// crdFiles maps apiVersion/kind of a custom resource to its CRD file in testdata/crds.
var crdFiles = map[string]string{
	"keda.sh/v1alpha1/ScaledObject":           "keda.sh_scaledobjects.yaml",
	"monitoring.coreos.com/v1/ServiceMonitor": "monitoring.coreos.com_servicemonitors.yaml",
	"monitoring.coreos.com/v1/PrometheusRule": "monitoring.coreos.com_prometheusrules.yaml",
	"monitoring.coreos.com/v1/PodMonitor":     "monitoring.coreos.com_podmonitors.yaml",
	"postgresql.cnpg.io/v1/Cluster":           "postgresql.cnpg.io_clusters.yaml",
	"postgresql.cnpg.io/v1/ScheduledBackup":   "postgresql.cnpg.io_scheduledbackups.yaml",
	"barmancloud.cnpg.io/v1/ObjectStore":      "barmancloud.cnpg.io_objectstores.yaml",
}

// decode decodes one YAML document strictly: unknown fields and duplicate keys fail.
func decode(t *testing.T, doc []byte, schemas map[string]*jsonschema.Schema) (object, error) {
	t.Helper()
	var head struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Metadata   struct {
			Name      string `json:"name"`
			Namespace string `json:"namespace"`
		} `json:"metadata"`
	}
	if err := yaml.Unmarshal(doc, &head); err != nil {
		return object{}, err
	}
	gvk := head.APIVersion + "/" + head.Kind
	o := object{kind: head.Kind, name: head.Metadata.Name, ns: head.Metadata.Namespace}
	if mk, ok := typedKinds[gvk]; ok {
		o.typed = mk()
		if err := yaml.UnmarshalStrict(doc, o.typed); err != nil {
			return o, fmt.Errorf("%s %s: %w", gvk, o.name, err)
		}
		return o, nil
	}
	if sch, ok := schemas[gvk]; ok {
		j, err := yaml.YAMLToJSONStrict(doc)
		if err != nil {
			return o, fmt.Errorf("%s %s: %w", gvk, o.name, err)
		}
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(j))
		if err != nil {
			return o, err
		}
		if err := sch.Validate(inst); err != nil {
			return o, fmt.Errorf("%s %s: %w", gvk, o.name, err)
		}
		var m map[string]any
		if err := json.Unmarshal(j, &m); err != nil {
			return o, err
		}
		o.typed = m
		return o, nil
	}
	return o, fmt.Errorf("%s %s: no Go type or CRD schema known for this kind", gvk, o.name)
}

// closeObjects sets additionalProperties: false on every object schema that lists its
// properties, unless it preserves unknown fields: the API server would prune such fields
// silently; here they fail.
func closeObjects(s any) {
	switch v := s.(type) {
	case map[string]any:
		_, hasProps := v["properties"]
		_, hasAP := v["additionalProperties"]
		if hasProps && !hasAP && v["x-kubernetes-preserve-unknown-fields"] != true {
			v["additionalProperties"] = false
		}
		for _, c := range v {
			closeObjects(c)
		}
	case []any:
		for _, c := range v {
			closeObjects(c)
		}
	}
}

// loadSchemas compiles the openAPIV3Schema of each vendored CRD, once: the schemas are only
// read afterwards, and CloudNativePG's Cluster is large.
func loadSchemas(t *testing.T) map[string]*jsonschema.Schema {
	t.Helper()
	schemas, err := compiledSchemas()
	if err != nil {
		t.Fatal(err)
	}
	return schemas
}

var compiledSchemas = sync.OnceValues(compileSchemas)

func compileSchemas() (map[string]*jsonschema.Schema, error) {
	out := map[string]*jsonschema.Schema{}
	for gvk, file := range crdFiles {
		b, err := os.ReadFile(filepath.Join("testdata", "crds", file))
		if err != nil {
			return nil, err
		}
		var crd struct {
			Spec struct {
				Group    string `json:"group"`
				Versions []struct {
					Name   string `json:"name"`
					Schema struct {
						OpenAPIV3Schema json.RawMessage `json:"openAPIV3Schema"`
					} `json:"schema"`
				} `json:"versions"`
			} `json:"spec"`
		}
		if err := yaml.Unmarshal(b, &crd); err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		var raw json.RawMessage
		for _, v := range crd.Spec.Versions {
			if strings.HasPrefix(gvk, crd.Spec.Group+"/"+v.Name+"/") {
				raw = v.Schema.OpenAPIV3Schema
			}
		}
		if raw == nil {
			return nil, fmt.Errorf("%s: no version for %s", file, gvk)
		}
		s, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
		if err != nil {
			return nil, err
		}
		closeObjects(s)
		c := jsonschema.NewCompiler()
		url := "file:///" + file + ".json"
		if err := c.AddResource(url, s); err != nil {
			return nil, err
		}
		sch, err := c.Compile(url)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		out[gvk] = sch
	}
	return out, nil
}

// build runs kustomize on dir and decodes every resource strictly.
func build(t *testing.T, dir string, schemas map[string]*jsonschema.Schema) []object {
	t.Helper()
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	m, err := k.Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		t.Fatalf("kustomize build %s: %v", dir, err)
	}
	var out []object
	for _, r := range m.Resources() {
		b, err := r.AsYAML()
		if err != nil {
			t.Fatal(err)
		}
		o, err := decode(t, b, schemas)
		if err != nil {
			t.Errorf("%s: %v", dir, err)
			continue
		}
		out = append(out, o)
	}
	return out
}

func overlays(t *testing.T) []string {
	t.Helper()
	dirs, err := filepath.Glob("k8s/overlays/*")
	if err != nil || len(dirs) < 3 {
		t.Fatalf("overlays: %v %v", dirs, err)
	}
	return dirs
}

// deployed is what runs in the cluster with overlay dir: the overlay's objects and a run's
// (runDir), which is applied beside it.
func deployed(t *testing.T, dir string, schemas map[string]*jsonschema.Schema) []object {
	t.Helper()
	return append(build(t, dir, schemas), build(t, runDir, schemas)...)
}

// jobOf finds a run's Job by its role (planner, reviewer): its name carries the run id.
func jobOf(objs []object, role string) *batchv1.Job {
	for _, o := range objs {
		if j, ok := o.typed.(*batchv1.Job); ok && j.Labels["app.kubernetes.io/name"] == role {
			return j
		}
	}
	return nil
}

func find[T any](objs []object, kind, name string) *T {
	for _, o := range objs {
		if o.kind == kind && o.name == name {
			if v, ok := o.typed.(*T); ok {
				return v
			}
		}
	}
	return nil
}

// podSpecs returns every pod template (or pod) in objs, by "Kind/name".
func podSpecs(objs []object) map[string]*corev1.PodTemplateSpec {
	out := map[string]*corev1.PodTemplateSpec{}
	for _, o := range objs {
		switch v := o.typed.(type) {
		case *appsv1.Deployment:
			out[o.kind+"/"+o.name] = &v.Spec.Template
		case *appsv1.StatefulSet:
			out[o.kind+"/"+o.name] = &v.Spec.Template
		case *batchv1.Job:
			out[o.kind+"/"+o.name] = &v.Spec.Template
		case *corev1.Pod:
			out[o.kind+"/"+o.name] = &corev1.PodTemplateSpec{ObjectMeta: v.ObjectMeta, Spec: v.Spec}
		}
	}
	return out
}

// memLimited: the Go runtime's soft memory limit is the container's own
// memory limit, so the collector works harder near it instead of the pod
// being killed for the heap's headroom.
func memLimited(c corev1.Container) bool {
	for _, e := range c.Env {
		if e.Name == "GOMEMLIMIT" {
			ref := e.ValueFrom
			return ref != nil && ref.ResourceFieldRef != nil && ref.ResourceFieldRef.Resource == "limits.memory" &&
				(ref.ResourceFieldRef.ContainerName == "" || ref.ResourceFieldRef.ContainerName == c.Name)
		}
	}
	return false
}

func flagValue(args []string, flag string) (string, bool) {
	for i, a := range args {
		if a == flag && i+1 < len(args) {
			return args[i+1], true
		}
		if v, ok := strings.CutPrefix(a, flag+"="); ok {
			return v, true
		}
	}
	return "", false
}

// dockerBinaries returns the cmd/* packages the Dockerfile builds and the final stage's USER.
func dockerfile(t *testing.T) (bins []string, finalFrom, user string, text string) {
	t.Helper()
	b, err := os.ReadFile("../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	text = string(b)
	// Join continuation lines so each instruction is one line.
	joined := regexp.MustCompile(`\\\n\s*`).ReplaceAllString(text, " ")
	for _, line := range strings.Split(joined, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		instr, rest, _ := strings.Cut(line, " ")
		switch strings.ToUpper(instr) {
		case "FROM":
			finalFrom, user = strings.Fields(rest)[0], ""
		case "USER":
			user = strings.TrimSpace(rest)
		case "RUN":
			if strings.Contains(rest, "go build") {
				for _, m := range regexp.MustCompile(`\./cmd/([A-Za-z0-9_-]+)`).FindAllStringSubmatch(rest, -1) {
					bins = append(bins, m[1])
				}
				for _, m := range regexp.MustCompile(`ln -s suitegen /out/([A-Za-z0-9_-]+)`).FindAllStringSubmatch(rest, -1) {
					bins = append(bins, m[1]) // a role: the one binary under another name
				}
			}
		}
	}
	sort.Strings(bins)
	return bins, finalFrom, user, text
}

func TestOverlaysDecodeStrictly(t *testing.T) {
	schemas := loadSchemas(t)
	for _, dir := range overlays(t) {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			objs := deployed(t, dir, schemas)
			if len(objs) < 15 {
				t.Fatalf("%s built only %d objects", dir, len(objs))
			}
			for _, o := range objs {
				if o.kind != "Namespace" && o.ns != namespace {
					t.Errorf("%s/%s in namespace %q, want %q", o.kind, o.name, o.ns, namespace)
				}
			}
			checkInvariants(t, objs)
		})
	}
}

func checkInvariants(t *testing.T, objs []object) {
	bins, _, _, _ := dockerfile(t)

	// Writers drain before Kubernetes kills them.
	w := find[appsv1.Deployment](objs, "Deployment", "writer")
	if w == nil {
		t.Fatal("no writer Deployment")
	}
	ws := w.Spec.Template.Spec
	drain := 90 * time.Second // the writer's default
	if v, ok := flagValue(ws.Containers[0].Args, "--drain-timeout"); ok {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("writer --drain-timeout %q: %v", v, err)
		}
		drain = d
	}
	if ws.TerminationGracePeriodSeconds == nil {
		t.Error("writer has no terminationGracePeriodSeconds")
	} else if grace := time.Duration(*ws.TerminationGracePeriodSeconds) * time.Second; grace <= drain {
		t.Errorf("writer terminationGracePeriodSeconds %s not longer than drain timeout %s", grace, drain)
	}
	addr, _ := flagValue(ws.Containers[0].Args, "--metrics-addr")
	for _, p := range []*corev1.Probe{ws.Containers[0].LivenessProbe, ws.Containers[0].ReadinessProbe} {
		if p == nil || p.HTTPGet == nil {
			t.Fatal("writer lacks HTTP liveness/readiness probes")
		}
	}
	if got := ws.Containers[0].LivenessProbe.HTTPGet.Path; got != "/healthz" {
		t.Errorf("writer liveness path %q, want /healthz", got)
	}
	if got := ws.Containers[0].ReadinessProbe.HTTPGet.Path; got != "/readyz" {
		t.Errorf("writer readiness path %q, want /readyz", got)
	}
	port := ws.Containers[0].LivenessProbe.HTTPGet.Port.String()
	var metricsPort int32
	for _, p := range ws.Containers[0].Ports {
		if p.Name == port {
			metricsPort = p.ContainerPort
		}
	}
	if addr != fmt.Sprintf(":%d", metricsPort) {
		t.Errorf("writer probes port %q (%d) but --metrics-addr is %q", port, metricsPort, addr)
	}
	for _, f := range []string{"--nats", "--model", "--metrics-addr"} {
		if _, ok := flagValue(ws.Containers[0].Args, f); !ok {
			t.Errorf("writer lacks %s", f)
		}
	}
	for _, job := range []string{"planner", "reviewer"} {
		if jobOf(objs, job) == nil {
			t.Errorf("no %s Job", job)
		}
	}
	if p := jobOf(objs, "planner"); p != nil {
		for _, f := range []string{"--run", "--nats", "--scenarios"} {
			if _, ok := flagValue(p.Spec.Template.Spec.Containers[0].Args, f); !ok {
				t.Errorf("planner lacks %s", f)
			}
		}
	}

	configMaps := map[string]*corev1.ConfigMap{}
	for _, o := range objs {
		if cm, ok := o.typed.(*corev1.ConfigMap); ok {
			configMaps[o.name] = cm
		}
	}
	secretRefs := map[string]bool{}
	for where, tpl := range podSpecs(objs) {
		spec := tpl.Spec
		all := append(slices.Clone(spec.InitContainers), spec.Containers...)
		for _, c := range all {
			for _, bad := range secretArgs(c, configMaps) {
				t.Errorf("%s container %s: %s", where, c.Name, bad)
			}
			for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
				req, hasReq := c.Resources.Requests[r]
				lim, hasLim := c.Resources.Limits[r]
				if !hasReq || !hasLim {
					t.Errorf("%s container %s: missing %s request or limit", where, c.Name, r)
				} else if req.Cmp(lim) > 0 {
					t.Errorf("%s container %s: %s request %s above limit %s", where, c.Name, r, req.String(), lim.String())
				}
			}
			if c.SecurityContext == nil || c.SecurityContext.AllowPrivilegeEscalation == nil || *c.SecurityContext.AllowPrivilegeEscalation {
				t.Errorf("%s container %s: allowPrivilegeEscalation not false", where, c.Name)
			}
			if len(c.Command) > 0 {
				if bin, ok := strings.CutPrefix(c.Command[0], "/usr/local/bin/"); ok && !slices.Contains(bins, bin) {
					t.Errorf("%s runs %s, which the Dockerfile does not build (%v)", where, c.Command[0], bins)
				} else if ok && !memLimited(c) {
					t.Errorf("%s container %s: GOMEMLIMIT is not its own limits.memory (resourceFieldRef)", where, c.Name)
				}
			}
			for _, e := range c.EnvFrom {
				if e.ConfigMapRef != nil && configMaps[e.ConfigMapRef.Name] == nil {
					t.Errorf("%s: envFrom ConfigMap %s does not exist", where, e.ConfigMapRef.Name)
				}
				if e.SecretRef != nil {
					secretRefs[e.SecretRef.Name] = true
				}
			}
			for _, e := range c.Env {
				if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
					secretRefs[e.ValueFrom.SecretKeyRef.Name] = true
				}
				if strings.Contains(strings.ToUpper(e.Name), "PASSWORD") && e.Value != "" {
					t.Errorf("%s container %s: %s given as a literal", where, c.Name, e.Name)
				}
			}
		}
		if !strings.HasPrefix(where, "Pod/") && !strings.HasPrefix(where, "Job/") {
			for _, c := range spec.Containers {
				if c.LivenessProbe == nil || c.ReadinessProbe == nil {
					t.Errorf("%s container %s: missing liveness or readiness probe", where, c.Name)
				}
			}
		}
		for _, v := range spec.Volumes {
			if v.ConfigMap != nil && configMaps[v.ConfigMap.Name] == nil {
				t.Errorf("%s: volume ConfigMap %s does not exist", where, v.ConfigMap.Name)
			}
			if v.Secret != nil {
				secretRefs[v.Secret.SecretName] = true
			}
		}
	}
	for s := range crdSecretRefs(objs) {
		secretRefs[s] = true
	}
	for s := range secretRefs {
		if !slices.Contains(expectedSecrets, s) {
			t.Errorf("manifests use Secret %s, which is not among the documented %v", s, expectedSecrets)
		}
	}

	// No secret in a ConfigMap.
	secretKey := regexp.MustCompile(`(?i)(password|passwd|secret|token|api_?key|private)`)
	secretVal := []*regexp.Regexp{
		regexp.MustCompile(`\bsk-[A-Za-z0-9_-]{16,}`),
		regexp.MustCompile(`(?i)postgres(ql)?://[^:/@\s]+:[^@\s]+@`),
		regexp.MustCompile(`-----BEGIN [A-Z ]*PRIVATE KEY-----`),
		regexp.MustCompile(`(?i)password\s*[=:]\s*\S+`),
	}
	for name, cm := range configMaps {
		for k, v := range cm.Data {
			if secretKey.MatchString(k) {
				t.Errorf("ConfigMap %s key %s looks like a secret", name, k)
			}
			for _, re := range secretVal {
				if re.MatchString(v) {
					t.Errorf("ConfigMap %s key %s holds what looks like a secret (%s)", name, k, re)
				}
			}
		}
	}

	// suitegen's processes get the database URL (and its password) from the Secret ledger-app
	// and verify the server against ledger-ca, and NATS against nats-tls; the database's
	// superuser is used by none of them, and a new database gets the roles and grants of
	// docs/SECURITY.md.
	checkDatabaseClients(t, objs)
	checkNATSClients(t, objs)
	for _, name := range []string{"writer", "planner", "reviewer"} {
		for where, tpl := range podSpecs(objs) {
			if tpl.Labels["app.kubernetes.io/name"] != name {
				continue
			}
			if !slices.ContainsFunc(tpl.Spec.Containers[0].EnvFrom, func(e corev1.EnvFromSource) bool {
				return e.SecretRef != nil && e.SecretRef.Name == "suitegen-secrets"
			}) {
				t.Errorf("%s does not take its environment (OPENAI_API_KEY) from suitegen-secrets", where)
			}
		}
	}
	if pg := find[appsv1.StatefulSet](objs, "StatefulSet", "postgres"); pg != nil {
		checkPostgres(t, pg, configMaps)
	}

	// Services select some pod and name ports those pods have.
	pods := podSpecs(objs)
	for _, o := range objs {
		svc, ok := o.typed.(*corev1.Service)
		if !ok {
			continue
		}
		matched := false
		for _, tpl := range pods {
			if len(svc.Spec.Selector) > 0 && labelsMatch(svc.Spec.Selector, tpl.Labels) {
				matched = true
				for _, p := range svc.Spec.Ports {
					if p.TargetPort.StrVal != "" && !hasPort(tpl.Spec.Containers, p.TargetPort.StrVal) {
						t.Errorf("Service %s port %s: pod template has no port named %s", svc.Name, p.Name, p.TargetPort.StrVal)
					}
				}
			}
		}
		if !matched {
			t.Errorf("Service %s selects no pod template", svc.Name)
		}
	}

	// Every NetworkPolicy and PodDisruptionBudget selects some pod; the ServiceMonitor
	// selects the metrics Service by its labels and names one of its ports.
	for _, o := range objs {
		var sel map[string]string
		switch v := o.typed.(type) {
		case *networkingv1.NetworkPolicy:
			sel = v.Spec.PodSelector.MatchLabels
			if len(sel) == 0 && len(v.Spec.PodSelector.MatchExpressions) == 0 {
				continue // all pods
			}
		case *policyv1.PodDisruptionBudget:
			sel = v.Spec.Selector.MatchLabels
		default:
			continue
		}
		matched := false
		for _, tpl := range pods {
			matched = matched || labelsMatch(sel, tpl.Labels)
		}
		for _, labels := range externalPods(objs) {
			matched = matched || labelsMatch(sel, labels)
		}
		if !matched {
			t.Errorf("%s %s selects no pod template (%v)", o.kind, o.name, sel)
		}
	}
	// A PodMonitor selects pods of the overlay (or the operator's) and names a port they have,
	// with the release label the ServiceMonitors carry.
	for _, o := range objs {
		if o.kind != "PodMonitor" {
			continue
		}
		spec := o.typed.(map[string]any)["spec"].(map[string]any)
		sel := map[string]string{}
		for k, v := range spec["selector"].(map[string]any)["matchLabels"].(map[string]any) {
			sel[k], _ = v.(string)
		}
		matched := false
		for _, labels := range externalPods(objs) {
			matched = matched || (len(sel) > 0 && labelsMatch(sel, labels))
		}
		if !matched {
			t.Errorf("PodMonitor %s selects no pod (%v)", o.name, sel)
		}
		for _, ep := range spec["podMetricsEndpoints"].([]any) {
			if p := ep.(map[string]any)["port"]; p != "metrics" {
				t.Errorf("PodMonitor %s scrapes port %v; CloudNativePG's exporter is metrics", o.name, p)
			}
		}
		for _, sm := range objs {
			if sm.kind == "ServiceMonitor" {
				want := get(sm.typed, "metadata", "labels", "release")
				if got := get(o.typed, "metadata", "labels", "release"); got != want {
					t.Errorf("PodMonitor %s release %v, the ServiceMonitors' %v", o.name, got, want)
				}
			}
		}
	}
	for _, o := range objs {
		if o.kind != "ServiceMonitor" {
			continue
		}
		spec := o.typed.(map[string]any)["spec"].(map[string]any)
		ml := spec["selector"].(map[string]any)["matchLabels"].(map[string]any)
		found := false
		for _, so := range objs {
			svc, ok := so.typed.(*corev1.Service)
			if !ok {
				continue
			}
			match := true
			for k, v := range ml {
				match = match && svc.Labels[k] == v
			}
			if !match {
				continue
			}
			found = true
			for _, ep := range spec["endpoints"].([]any) {
				port := ep.(map[string]any)["port"]
				if !slices.ContainsFunc(svc.Spec.Ports, func(p corev1.ServicePort) bool { return p.Name == port }) {
					t.Errorf("ServiceMonitor endpoint port %v not on Service %s", port, svc.Name)
				}
			}
		}
		if !found {
			t.Errorf("ServiceMonitor %s selects no Service (%v)", o.name, ml)
		}
	}

	// The dashboard ConfigMap carries the dashboard.
	dash, err := os.ReadFile("grafana/suitegen.json")
	if err != nil {
		t.Fatal(err)
	}
	if cm := configMaps["suitegen-dashboard"]; cm == nil || cm.Data["suitegen.json"] != string(dash) {
		t.Error("ConfigMap suitegen-dashboard missing or not equal to deploy/grafana/suitegen.json")
	} else if cm.Labels["grafana_dashboard"] != "1" {
		t.Error("dashboard ConfigMap lacks the grafana_dashboard label")
	}

	// NATS: the overlay's own servers (cluster routes match the replica count; a single node
	// has no cluster block), or none, and then the NATS chart's (nats_values_test.go).
	natsHeadless := "nats"
	if nats := find[appsv1.StatefulSet](objs, "StatefulSet", "nats"); nats == nil {
		natsHeadless = natsChart.headless()
	} else {
		if nats.Spec.Replicas == nil {
			t.Fatal("nats StatefulSet without replicas")
		}
		var natsConf string
		for _, v := range nats.Spec.Template.Spec.Volumes {
			if v.ConfigMap != nil && configMaps[v.ConfigMap.Name] != nil {
				natsConf = configMaps[v.ConfigMap.Name].Data["nats.conf"]
			}
		}
		if !strings.Contains(natsConf, "jetstream") || !strings.Contains(natsConf, "store_dir") {
			t.Errorf("nats.conf lacks jetstream file storage:\n%s", natsConf)
		}
		routes := regexp.MustCompile(`nats://nats-(\d+)\.nats\.`+namespace+`\.svc`).FindAllStringSubmatch(natsConf, -1)
		replicas := int(*nats.Spec.Replicas)
		if replicas > 1 && len(routes) != replicas {
			t.Errorf("nats: %d replicas but %d cluster routes", replicas, len(routes))
		}
		if replicas == 1 && strings.Contains(natsConf, "cluster {") {
			t.Error("single nats replica with a cluster block: routes to absent peers")
		}
		if len(nats.Spec.VolumeClaimTemplates) == 0 {
			t.Error("nats has no PVC template")
		}
	}

	// KEDA scales the writer Deployment on the slice consumer's lag, when present.
	for _, o := range objs {
		if o.kind != "ScaledObject" {
			continue
		}
		so := o.typed.(map[string]any)["spec"].(map[string]any)
		if ref := so["scaleTargetRef"].(map[string]any); ref["name"] != "writer" {
			t.Errorf("ScaledObject targets %v, want writer", ref["name"])
		}
		if w.Spec.Replicas == nil {
			t.Error("writer has no replicas")
		}
		minR, _ := so["minReplicaCount"].(float64)
		maxR, _ := so["maxReplicaCount"].(float64)
		if minR < 1 || maxR < minR {
			t.Errorf("ScaledObject replicas min %v max %v", minR, maxR)
		}
		trig := so["triggers"].([]any)[0].(map[string]any)
		md := trig["metadata"].(map[string]any)
		want := map[string]string{"stream": "SUITEGEN_SLICES", "consumer": "writers", "account": "$G"}
		if trig["type"] != "nats-jetstream" {
			t.Errorf("trigger type %v", trig["type"])
		}
		for k, v := range want {
			if md[k] != v {
				t.Errorf("trigger metadata %s = %v, want %s", k, md[k], v)
			}
		}
		for _, k := range []string{"natsServerMonitoringEndpoint", "lagThreshold"} {
			if md[k] == nil || md[k] == "" {
				t.Errorf("trigger metadata lacks %s", k)
			}
		}
		// KEDA asks each server of a cluster as <server name>.<endpoint>: the headless Service.
		if ep, _ := md["natsServerMonitoringEndpoint"].(string); !strings.HasPrefix(ep, natsHeadless+"."+namespace+".svc") || !strings.HasSuffix(ep, ":8222") {
			t.Errorf("monitoring endpoint %q is not the monitor port of the headless Service %s", ep, natsHeadless)
		}
	}
}

func labelsMatch(sel, labels map[string]string) bool {
	for k, v := range sel {
		if labels[k] != v {
			return false
		}
	}
	return true
}

func hasPort(cs []corev1.Container, name string) bool {
	for _, c := range cs {
		for _, p := range c.Ports {
			if p.Name == name {
				return true
			}
		}
	}
	return false
}

func TestOverlayDifferences(t *testing.T) {
	schemas := loadSchemas(t)
	kinds := func(objs []object) map[string]int {
		m := map[string]int{}
		for _, o := range objs {
			m[o.kind]++
		}
		return m
	}
	prod := build(t, "k8s/overlays/production", schemas)
	small := build(t, "k8s/overlays/small", schemas)
	if k := kinds(prod); k["ScaledObject"] != 1 || k["ServiceMonitor"] != 2 || k["PrometheusRule"] != 1 {
		t.Errorf("production kinds %v: want one ScaledObject, two ServiceMonitors (processes, serve) and one PrometheusRule", k)
	}
	// Production keeps state on operators and charts: the ledger is a CloudNativePG Cluster
	// with its backups, NATS the chart's; no hand-written StatefulSet of either.
	if k := kinds(prod); k["Cluster"] != 1 || k["ScheduledBackup"] < 1 || k["ObjectStore"] != 1 || k["PodMonitor"] != 1 || k["StatefulSet"] != 0 {
		t.Errorf("production kinds %v: want one Cluster, a ScheduledBackup, one ObjectStore, the ledger's PodMonitor and no StatefulSet", k)
	}
	for _, k := range []string{"ScaledObject", "ServiceMonitor", "PrometheusRule", "Cluster", "ScheduledBackup", "ObjectStore", "PodMonitor"} {
		if n := kinds(small)[k]; n != 0 {
			t.Errorf("small has %d %s: want no CRD objects", n, k)
		}
	}
	// Both overlays run serve: the page and the run figures outlive the Jobs.
	for name, objs := range map[string][]object{"production": prod, "small": small} {
		if find[appsv1.Deployment](objs, "Deployment", "serve") == nil {
			t.Errorf("%s has no serve Deployment", name)
		}
	}
	if n := *find[appsv1.StatefulSet](small, "StatefulSet", "nats").Spec.Replicas; n != 1 {
		t.Errorf("small nats replicas %d, want 1", n)
	}
	if n := *find[appsv1.StatefulSet](small, "StatefulSet", "postgres").Spec.Replicas; n != 1 {
		t.Errorf("small postgres replicas %d, want 1", n)
	}
	if w := find[appsv1.Deployment](small, "Deployment", "writer"); w.Spec.Replicas == nil || *w.Spec.Replicas < 1 {
		t.Error("small writers need a fixed replica count")
	}
	// The queue is replicated on every NATS server of production (the chart's), on the one of
	// small.
	values := natsValues(t)
	for name, want := range map[string]struct {
		objs []object
		n    string
	}{"production": {prod, fmt.Sprint(values.Config.Cluster.Replicas)}, "small": {small, "1"}} {
		for _, cm := range []string{"suitegen-config", "suitegen-shared"} {
			if got := configMap(want.objs, cm).Data["SUITEGEN_QUEUE_REPLICAS"]; got != want.n {
				t.Errorf("%s %s SUITEGEN_QUEUE_REPLICAS %q, want %s", name, cm, got, want.n)
			}
		}
	}
	if values.Config.Cluster.Replicas != 3 {
		t.Errorf("the NATS chart runs %d servers, want 3", values.Config.Cluster.Replicas)
	}
}

// TestSharedSettingsAgree: the settings every process must agree on (base/shared.env, and
// each overlay's shared.env) are the same in suitegen-config, which the writers read, and
// suitegen-shared, which a run's Jobs read, in every overlay.
func TestSharedSettingsAgree(t *testing.T) {
	schemas := loadSchemas(t)
	keys := envKeys(t, "k8s/base/shared.env")
	if len(keys) < 3 {
		t.Fatalf("base/shared.env has %d settings", len(keys))
	}
	for _, dir := range overlays(t) {
		objs := build(t, dir, schemas)
		cfg, shared := configMap(objs, "suitegen-config"), configMap(objs, "suitegen-shared")
		if shared.Name != "suitegen-shared" {
			t.Errorf("%s: suitegen-shared is named %q: a run's Jobs name it without a hash", dir, shared.Name)
		}
		fromCfg := map[string]string{}
		for _, k := range keys {
			fromCfg[k] = cfg.Data[k]
		}
		if !maps.Equal(fromCfg, shared.Data) {
			t.Errorf("%s: suitegen-config %v and suitegen-shared %v disagree", dir, cfg.Data, shared.Data)
		}
	}
}

// envKeys lists the keys of a kustomize env file.
func envKeys(t *testing.T, file string) []string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, _, ok := strings.Cut(line, "=")
		if !ok {
			t.Fatalf("%s: %q is no KEY=value line", file, line)
		}
		keys = append(keys, k)
	}
	return keys
}

// configMap finds a ConfigMap by the name it was generated under (the hash suffix aside).
func configMap(objs []object, name string) *corev1.ConfigMap {
	for _, o := range objs {
		cm, ok := o.typed.(*corev1.ConfigMap)
		if !ok {
			continue
		}
		if base, hash, _ := strings.Cut(strings.TrimPrefix(o.name, name), "-"); base == "" && (o.name == name || (hash != "" && !strings.Contains(hash, "-"))) {
			return cm
		}
	}
	return &corev1.ConfigMap{}
}

// TestImagesPinned: every container of every overlay names its image with a
// tag other than latest (or a digest), so a rollout is a change to the
// manifests, never a registry push.
func TestImagesPinned(t *testing.T) {
	schemas := loadSchemas(t)
	pinned := func(img string) bool {
		if strings.Contains(img, "@sha256:") {
			return true
		}
		_, tag, ok := strings.Cut(img[strings.LastIndex(img, "/")+1:], ":")
		return ok && tag != "" && tag != "latest"
	}
	n := 0
	for _, dir := range overlays(t) {
		for _, o := range deployed(t, dir, schemas) {
			for _, img := range images(o.typed) {
				n++
				if !pinned(img) {
					t.Errorf("%s: %s %s runs image %q: pin a tag", dir, o.kind, o.name, img)
				}
			}
		}
		// A run's Jobs run the overlay's image (both say it: a rollout changes both).
		objs := build(t, dir, schemas)
		run := build(t, runDir, schemas)
		if w, p := find[appsv1.Deployment](objs, "Deployment", "writer"), jobOf(run, "planner"); w == nil || p == nil ||
			w.Spec.Template.Spec.Containers[0].Image != p.Spec.Template.Spec.Containers[0].Image {
			t.Errorf("%s: the writers and %s's Jobs run different images", dir, runDir)
		}
	}
	// The ledger's PostgreSQL and the NATS chart's servers.
	for _, o := range build(t, "k8s/overlays/production", schemas) {
		if o.kind == "Cluster" {
			n++
			if img, _ := o.typed.(map[string]any)["spec"].(map[string]any)["imageName"].(string); !pinned(img) {
				t.Errorf("Cluster %s runs image %q: pin a tag", o.name, img)
			}
		}
	}
	if tag := natsValues(t).Container.Image.Tag; tag == "" || tag == "latest" {
		t.Errorf("the NATS chart's values run image tag %q: pin a tag", tag)
	}
	if n < 8 {
		t.Fatalf("found only %d container images in the overlays", n)
	}
	tools, _ := filepath.Glob("k8s/tools/*.yaml")
	for _, f := range tools {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range regexp.MustCompile(`(?m)^\s*image:\s*"?([^"\s]+)`).FindAllStringSubmatch(string(b), -1) {
			if !pinned(m[1]) {
				t.Errorf("%s runs image %q: pin a tag", f, m[1])
			}
		}
	}
	if !pinned("a/b:1.2") || pinned("a/b") || pinned("a/b:latest") || pinned("localhost:5000/b") {
		t.Error("pinned() is wrong")
	}
}

// images are the container and init-container images of a typed workload.
func images(obj any) []string {
	var spec *corev1.PodSpec
	switch o := obj.(type) {
	case *appsv1.Deployment:
		spec = &o.Spec.Template.Spec
	case *appsv1.StatefulSet:
		spec = &o.Spec.Template.Spec
	case *batchv1.Job:
		spec = &o.Spec.Template.Spec
	case *corev1.Pod:
		spec = &o.Spec
	default:
		return nil
	}
	var out []string
	for _, c := range append(spec.InitContainers, spec.Containers...) {
		out = append(out, c.Image)
	}
	return out
}

// TestStrictDecodingCanFail shows a misspelt field fails, in a typed kind and in a CRD kind.
func TestStrictDecodingCanFail(t *testing.T) {
	schemas := loadSchemas(t)
	bad := map[string]string{
		"typed unknown field": `apiVersion: apps/v1
kind: Deployment
metadata: {name: writer, namespace: suitegen}
spec:
  replica: 2
  selector: {matchLabels: {a: b}}
  template: {metadata: {labels: {a: b}}, spec: {containers: [{name: c, image: i}]}}
`,
		"typed duplicate key": `apiVersion: v1
kind: ConfigMap
metadata: {name: x, namespace: suitegen}
data: {a: "1", a: "2"}
`,
		"crd unknown field": `apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata: {name: w, namespace: suitegen}
spec:
  scaleTargetRef: {name: writer}
  minReplicas: 1
  triggers: [{type: nats-jetstream, metadata: {stream: S}}]
`,
		"crd missing required": `apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata: {name: m, namespace: suitegen}
spec:
  endpoints: [{port: metrics}]
`,
		"crd wrong type": `apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata: {name: w, namespace: suitegen}
spec:
  scaleTargetRef: {name: writer}
  triggers: [{type: nats-jetstream, metadata: {lagThreshold: 5}}]
`,
		"rule unknown field": `apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata: {name: r, namespace: suitegen}
spec:
  groups: [{name: g, rules: [{alert: A, expr: up == 0, forr: 5m}]}]
`,
		"rule bad duration": `apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata: {name: r, namespace: suitegen}
spec:
  groups: [{name: g, rules: [{alert: A, expr: up == 0, for: five minutes}]}]
`,
		"cluster unknown field": `apiVersion: postgresql.cnpg.io/v1
kind: Cluster
metadata: {name: ledger, namespace: suitegen}
spec:
  instances: 3
  storage: {size: 1Gi}
  postgresql: {synchronus: {method: any, number: 1}}
`,
		"cluster wrong enum": `apiVersion: postgresql.cnpg.io/v1
kind: Cluster
metadata: {name: ledger, namespace: suitegen}
spec:
  instances: 3
  storage: {size: 1Gi}
  postgresql: {synchronous: {method: all, number: 1}}
`,
		"object store unknown field": `apiVersion: barmancloud.cnpg.io/v1
kind: ObjectStore
metadata: {name: s, namespace: suitegen}
spec:
  configuration:
    destinationPath: s3://b/p
    s3Credentials: {accessKeyId: {name: c, key: K}, secretAccesKey: {name: c, key: S}}
`,
		"backup wrong type": `apiVersion: postgresql.cnpg.io/v1
kind: ScheduledBackup
metadata: {name: b, namespace: suitegen}
spec:
  schedule: "0 0 3 * * *"
  cluster: {name: ledger}
  immediate: "yes"
`,
		"unknown kind": `apiVersion: example.com/v1
kind: Widget
metadata: {name: w}
`,
	}
	for name, doc := range bad {
		if _, err := decode(t, []byte(doc), schemas); err == nil {
			t.Errorf("%s: decoded without error", name)
		} else {
			t.Logf("%s: %v", name, err)
		}
	}
	good := `apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata: {name: w, namespace: suitegen}
spec:
  scaleTargetRef: {name: writer}
  triggers: [{type: nats-jetstream, metadata: {lagThreshold: "5"}}]
`
	if _, err := decode(t, []byte(good), schemas); err != nil {
		t.Errorf("a valid ScaledObject was refused: %v", err)
	}
}

// TestToolsManifests decodes the manifests kept outside kustomize.
func TestToolsManifests(t *testing.T) {
	schemas := loadSchemas(t)
	files, _ := filepath.Glob("k8s/tools/*.yaml")
	if len(files) == 0 {
		t.Fatal("no k8s/tools manifests")
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range strings.Split(string(b), "\n---\n") {
			o, err := decode(t, []byte(doc), schemas)
			if err != nil {
				t.Errorf("%s: %v", f, err)
				continue
			}
			checkInvariantsPod(t, f, o)
		}
	}
}

func checkInvariantsPod(t *testing.T, file string, o object) {
	p, ok := o.typed.(*corev1.Pod)
	if !ok {
		return
	}
	if o.ns != namespace {
		t.Errorf("%s: namespace %q", file, o.ns)
	}
	for _, c := range p.Spec.Containers {
		if c.Resources.Limits.Cpu().IsZero() || c.Resources.Requests.Memory().IsZero() {
			t.Errorf("%s container %s lacks resources", file, c.Name)
		}
	}
}

func TestDockerfile(t *testing.T) {
	bins, from, user, text := dockerfile(t)
	entries, err := os.ReadDir("../cmd")
	if err != nil {
		t.Fatal(err)
	}
	var cmds []string
	for _, e := range entries {
		if e.IsDir() {
			cmds = append(cmds, e.Name())
		}
	}
	sort.Strings(cmds)
	if !slices.Equal(bins, cmds) {
		t.Errorf("Dockerfile builds or links %v, cmd/ has %v", bins, cmds)
	}
	if n := strings.Count(text, "go build"); n != 1 || !strings.Contains(text, "-o /out/suitegen ./cmd/suitegen") {
		t.Errorf("the image must hold one binary, suitegen (%d go build lines)", n)
	}
	if !strings.Contains(text, "-X github.com/suitegen/suitegen/pkg/cli.version=${VERSION}") {
		t.Error("the image's binary does not carry its VERSION")
	}
	for _, want := range []string{"suitegen", "planner", "writer", "reviewer"} {
		if !slices.Contains(bins, want) {
			t.Errorf("Dockerfile does not build %s", want)
		}
	}
	if !strings.HasPrefix(from, "gcr.io/distroless/static") && from != "scratch" {
		t.Errorf("final stage FROM %s, want distroless/static or scratch", from)
	}
	u, _, _ := strings.Cut(user, ":")
	if u == "" || u == "0" || u == "root" {
		t.Errorf("final stage USER %q is root or unset", user)
	}
	for _, want := range []string{"FROM golang:1.26", "CGO_ENABLED=0", "-trimpath", `-ldflags "-s -w`, "/usr/local/bin/"} {
		if !strings.Contains(text, want) {
			t.Errorf("Dockerfile lacks %s", want)
		}
	}
}

// TestDeployDoc checks every repository path named in docs/DEPLOY.md exists, every overlay
// is named, and every Secret the manifests need is created there.
func TestDeployDoc(t *testing.T) {
	b, err := os.ReadFile("../docs/DEPLOY.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	re := regexp.MustCompile(`(?:\./)?\b((?:deploy|docs|cmd|examples|pkg|skills)/[A-Za-z0-9_./-]*[A-Za-z0-9_/-])|\b(Dockerfile|go\.mod|Makefile)\b`)
	seen := 0
	for _, m := range re.FindAllStringSubmatch(doc, -1) {
		p := m[1] + m[2]
		seen++
		if _, err := os.Stat(filepath.Join("..", p)); err != nil {
			t.Errorf("DEPLOY.md names %s, which does not exist", p)
		}
	}
	if seen < 10 {
		t.Errorf("DEPLOY.md names only %d repository paths; the check would be vacuous", seen)
	}
	for _, dir := range overlays(t) {
		if !strings.Contains(doc, filepath.ToSlash(dir)) {
			t.Errorf("DEPLOY.md does not mention %s", dir)
		}
	}
	for _, s := range expectedSecrets {
		if !regexp.MustCompile(`kubectl[^\n]*create secret [a-z]+ ` + regexp.QuoteMeta(s) + `\b`).MatchString(doc) {
			t.Errorf("DEPLOY.md does not create Secret %s", s)
		}
	}
	for _, s := range operatorSecrets {
		if !regexp.MustCompile("`" + regexp.QuoteMeta(s) + "`[^.]*(made|kept) by the operator|operator[^.]* `" + regexp.QuoteMeta(s) + "`").MatchString(doc) {
			t.Errorf("DEPLOY.md does not say the operator makes %s in production", s)
		}
	}
	joined := regexp.MustCompile(`\\\n\s*`).ReplaceAllString(doc, " ") // shell continuation lines
	for _, want := range []string{
		"--scenarios 1000",
		"kubectl apply -k deploy/k8s/overlays/production",
		"kubectl apply -k " + filepath.ToSlash(filepath.Join("deploy", runDir)),
		"kubectl cp",
		// The operators and the chart, at the versions whose schemas the tests hold.
		"releases/cnpg-" + cnpgVersion + ".yaml",
		"plugin-barman-cloud/releases/download/v" + barmanPluginVersion + "/manifest.yaml",
		"helm upgrade --install " + natsChart.release + " nats/nats --version " + natsChart.version + " --namespace " + namespace,
		"helm template " + natsChart.release + " nats/nats --version " + natsChart.version + " --namespace " + namespace,
		"--values " + natsValuesFile,
	} {
		if !strings.Contains(joined, want) {
			t.Errorf("DEPLOY.md lacks %q", want)
		}
	}
	// The Jobs DEPLOY.md follows and unsuspends are those of a run it shows in run.env: the
	// one in the repository, or one it writes there.
	runs := map[string]bool{}
	for _, m := range regexp.MustCompile(`SUITEGEN_RUN=([a-z0-9-]+)`).FindAllStringSubmatch(doc, -1) {
		runs[m[1]] = true
	}
	if run := readEnv(t, filepath.Join(runDir, "run.env"))["SUITEGEN_RUN"]; !runs[run] {
		t.Errorf("DEPLOY.md does not show the run of %s/run.env, %s", runDir, run)
	}
	jobs := regexp.MustCompile(`\bjob[/ ](planner|reviewer)(-[a-z0-9-]+)?\b`).FindAllStringSubmatch(doc, -1)
	if len(jobs) < 4 {
		t.Errorf("DEPLOY.md names %d Jobs of a run", len(jobs))
	}
	for _, m := range jobs {
		if !runs[strings.TrimPrefix(m[2], "-")] {
			t.Errorf("DEPLOY.md names %s, the Job of no run it shows in run.env (%v)", m[0], runs)
		}
	}
}

// readEnv reads a kustomize env file into a map.
func readEnv(t *testing.T, file string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, line := range strings.Split(readFile(t, file), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, _ := strings.Cut(line, "=")
		out[k] = v
	}
	return out
}

// secretArgs lists what in a container's arguments could be a secret: a $(VAR) that does not
// come from a ConfigMap or a literal value (so from a Secret, or nowhere), a URL with a
// password, a key, a --database flag (its value is a URL with a password). Arguments show in
// the pod spec, in ps and in crash reports; secrets reach processes as env or files.
func secretArgs(c corev1.Container, configMaps map[string]*corev1.ConfigMap) []string {
	plain := map[string]bool{}
	for _, e := range c.EnvFrom {
		if e.ConfigMapRef != nil && configMaps[e.ConfigMapRef.Name] != nil {
			for k := range configMaps[e.ConfigMapRef.Name].Data {
				plain[e.Prefix+k] = true
			}
		}
	}
	for _, e := range c.Env {
		if e.ValueFrom == nil || e.ValueFrom.ConfigMapKeyRef != nil || e.ValueFrom.FieldRef != nil {
			plain[e.Name] = true
		} else {
			delete(plain, e.Name) // a later env entry overrides envFrom
		}
	}
	var bad []string
	ref := regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)
	secretVal := []*regexp.Regexp{
		regexp.MustCompile(`(?i)postgres(ql)?://[^:/@\s]+:[^@\s]+@`),
		regexp.MustCompile(`(?i)nats://[^:/@\s]+:[^@\s]+@`),
		regexp.MustCompile(`\bsk-[A-Za-z0-9_-]{16,}`),
		regexp.MustCompile(`(?i)password\s*[=:]\s*\S+`),
	}
	for _, a := range append(slices.Clone(c.Command), c.Args...) {
		for _, m := range ref.FindAllStringSubmatch(a, -1) {
			if !plain[m[1]] {
				bad = append(bad, fmt.Sprintf("argument %q takes $(%s), which comes from no ConfigMap or literal: secrets go in env or files", a, m[1]))
			}
		}
		for _, re := range secretVal {
			if re.MatchString(a) {
				bad = append(bad, fmt.Sprintf("argument %q looks like a secret", a))
			}
		}
		if a == "--database" || strings.HasPrefix(a, "--database=") {
			bad = append(bad, "--database is an argument: its value is a URL with a password; use SUITEGEN_DATABASE_URL from a Secret, or --database-url-file")
		}
	}
	return bad
}

// checkPostgres: the small overlay's one PostgreSQL pod. The image's superuser is postgres,
// not the role suitegen's processes log in as, and a new volume runs roles.sql (that role, with
// the password of ledger-app, owning the database) and then the base's setup.sql, in that order.
func checkPostgres(t *testing.T, pg *appsv1.StatefulSet, configMaps map[string]*corev1.ConfigMap) {
	t.Helper()
	c := pg.Spec.Template.Spec.Containers[0]
	env := map[string]corev1.EnvVar{}
	for _, e := range c.Env {
		env[e.Name] = e
	}
	if env["POSTGRES_USER"].Value != "postgres" {
		t.Errorf("postgres POSTGRES_USER %q: the image makes that role a superuser; it must not be suitegen's", env["POSTGRES_USER"].Value)
	}
	if e := env["SUITEGEN_DB_PASSWORD"]; e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil ||
		e.ValueFrom.SecretKeyRef.Name != operatorSecrets[0] || e.ValueFrom.SecretKeyRef.Key != "password" {
		t.Errorf("postgres SUITEGEN_DB_PASSWORD does not come from the password of %s, which the processes' URL carries: %+v", operatorSecrets[0], e)
	}
	mounted := ""
	for _, m := range c.VolumeMounts {
		if m.MountPath == "/docker-entrypoint-initdb.d" {
			mounted = m.Name
		}
	}
	files := map[string]string{}
	for _, v := range pg.Spec.Template.Spec.Volumes {
		if v.Name != mounted || v.Projected == nil {
			continue
		}
		for _, src := range v.Projected.Sources {
			if src.ConfigMap == nil || configMaps[src.ConfigMap.Name] == nil {
				t.Errorf("postgres initdb volume: ConfigMap %v missing", src.ConfigMap)
				continue
			}
			for _, it := range src.ConfigMap.Items {
				files[it.Path] = configMaps[src.ConfigMap.Name].Data[it.Key]
			}
		}
	}
	var names []string
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names) // the image runs them in this order
	if len(names) != 2 || files[names[0]] != readFile(t, "k8s/components/postgres-single/roles.sql") || files[names[1]] != readFile(t, setupSQLFile) {
		t.Errorf("postgres runs %v on a new volume, want roles.sql then setup.sql", names)
	}
}

func readFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// checkDatabaseClients: every process that talks to the database (label
// suitegen.dev/db-client) takes the application role's URL from the Secret ledger-app (key
// fqdn-uri, CloudNativePG's) into its environment and verifies the server (PGSSLMODE
// verify-full) against the CA of ledger-ca, mounted where PGSSLROOTCERT points; it connects
// only to a server that takes writes (PGTARGETSESSIONATTRS read-write).
func checkDatabaseClients(t *testing.T, objs []object) {
	t.Helper()
	n := 0
	for where, tpl := range podSpecs(objs) {
		if tpl.Labels["suitegen.dev/db-client"] != "true" {
			continue
		}
		n++
		c := tpl.Spec.Containers[0]
		env := map[string]corev1.EnvVar{}
		for _, e := range c.Env {
			env[e.Name] = e
		}
		if e := env["SUITEGEN_DATABASE_URL"]; e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil ||
			e.ValueFrom.SecretKeyRef.Name != operatorSecrets[0] || e.ValueFrom.SecretKeyRef.Key != "fqdn-uri" {
			t.Errorf("%s: SUITEGEN_DATABASE_URL does not come from %s (key fqdn-uri): %+v", where, operatorSecrets[0], e)
		}
		if v := env["PGSSLMODE"].Value; v != "verify-full" {
			t.Errorf("%s: PGSSLMODE %q, want verify-full", where, v)
		}
		if v := env["PGTARGETSESSIONATTRS"].Value; v != "read-write" {
			t.Errorf("%s: PGTARGETSESSIONATTRS %q, want read-write (a standby reached mid-failover is passed over)", where, v)
		}
		if p := env["PGSSLROOTCERT"].Value; !mountsSecretFile(tpl.Spec, c, p, operatorSecrets[1], "ca.crt") {
			t.Errorf("%s: PGSSLROOTCERT %q is not the ca.crt of %s mounted in the container", where, p, operatorSecrets[1])
		}
	}
	if n < 4 {
		t.Errorf("%d database clients (writer, serve, planner, reviewer at least)", n)
	}
}

// checkNATSClients: every NATS client reaches the URL of suitegen-shared or suitegen-config
// over TLS and verifies the server against the ca.crt of nats-tls, the Secret the NATS servers
// (the chart's, or components/nats-single) take their certificate and CA from.
func checkNATSClients(t *testing.T, objs []object) {
	t.Helper()
	n := 0
	for where, tpl := range podSpecs(objs) {
		if tpl.Labels["suitegen.dev/nats-client"] != "true" {
			continue
		}
		n++
		c := tpl.Spec.Containers[0]
		if v, _ := flagValue(c.Args, "--nats"); v != "$(SUITEGEN_NATS_URL)" {
			t.Errorf("%s: --nats %q, want $(SUITEGEN_NATS_URL)", where, v)
		}
		if p, _ := flagValue(c.Args, "--nats-tls-ca"); !mountsSecretFile(tpl.Spec, c, p, "nats-tls", "ca.crt") {
			t.Errorf("%s: --nats-tls-ca %q is not the ca.crt of nats-tls mounted in the container", where, p)
		}
	}
	if n < 3 {
		t.Errorf("%d NATS clients (writer, planner, reviewer at least)", n)
	}
}

// mountsSecretFile tells whether path, in container c, is key of Secret secret.
func mountsSecretFile(spec corev1.PodSpec, c corev1.Container, path, secret, key string) bool {
	for _, m := range c.VolumeMounts {
		rel, ok := strings.CutPrefix(path, strings.TrimSuffix(m.MountPath, "/")+"/")
		if !ok || m.SubPath != "" {
			continue
		}
		for _, v := range spec.Volumes {
			if v.Name != m.Name || v.Secret == nil || v.Secret.SecretName != secret {
				continue
			}
			if len(v.Secret.Items) == 0 {
				return rel == key
			}
			for _, it := range v.Secret.Items {
				if it.Key == key && it.Path == rel {
					return true
				}
			}
		}
	}
	return false
}

// externalPods are the labels of pods others make for an overlay: the CloudNativePG
// operator's instances of each Cluster, and, where the overlay runs no NATS of its own, the
// NATS chart's servers and nats-box (deploy/helm/nats/values.yaml).
func externalPods(objs []object) []map[string]string {
	var out []map[string]string
	for _, o := range objs {
		if o.kind == "Cluster" {
			out = append(out, map[string]string{"cnpg.io/cluster": o.name, "cnpg.io/podRole": "instance"})
		}
	}
	if find[appsv1.StatefulSet](objs, "StatefulSet", "nats") == nil {
		out = append(out, natsChart.serverLabels(), natsChart.boxLabels())
	}
	return out
}

// crdSecretRefs are the Secrets custom resources name: an ObjectStore's credentials.
func crdSecretRefs(objs []object) map[string]bool {
	out := map[string]bool{}
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			name, okN := v["name"].(string)
			_, okK := v["key"].(string)
			if okN && okK && len(v) == 2 {
				out[name] = true
			}
			for _, c := range v {
				walk(c)
			}
		case []any:
			for _, c := range v {
				walk(c)
			}
		}
	}
	for _, o := range objs {
		if o.kind == "ObjectStore" {
			walk(o.typed.(map[string]any)["spec"].(map[string]any)["configuration"])
		}
	}
	return out
}

// TestSecretArgsCanFail: the argument check sees a secret passed as an argument.
func TestSecretArgsCanFail(t *testing.T) {
	cms := map[string]*corev1.ConfigMap{"cfg": {Data: map[string]string{"SUITEGEN_NATS_URL": "tls://nats:4222"}}}
	c := corev1.Container{
		EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}}},
			{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "suitegen-secrets"}}}},
		Env:  []corev1.EnvVar{{Name: "KEY", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{Key: "k"}}}},
		Args: []string{"--nats", "$(SUITEGEN_NATS_URL)", "--database", "$(SUITEGEN_DATABASE_URL)", "--key=$(KEY)", "postgres://u:pw@db/x"},
	}
	bad := secretArgs(c, cms)
	if len(bad) != 4 {
		t.Fatalf("found %d problems, want 4 ($(SUITEGEN_DATABASE_URL), --database, $(KEY), the URL):\n%s", len(bad), strings.Join(bad, "\n"))
	}
	c.Args = c.Args[:2]
	if bad := secretArgs(c, cms); len(bad) != 0 {
		t.Errorf("a ConfigMap value taken as a secret: %v", bad)
	}
}
