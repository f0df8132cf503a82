package deploy

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/yaml"
)

// natsValuesFile holds the production overlay's values for the official NATS Helm chart
// (a path of the repository, as docs/DEPLOY.md names it).
const natsValuesFile = "deploy/helm/nats/values.yaml"

// natsChartDefaults is the chart's own values.yaml at natsChart.version: the chart ships no
// values.schema.json, so its defaults are the schema (the file says where it comes from).
const natsChartDefaults = "testdata/charts/nats-2.14.2-values.yaml"

// natsChart is how docs/DEPLOY.md installs the chart, and what the chart names and labels
// from that (helm/charts/nats/templates/_helpers.tpl of the chart: the full name is the
// release name when it contains the chart's name; selector labels name, instance, component).
var natsChart = chartRelease{release: "nats", chart: "nats", version: "2.14.2"}

type chartRelease struct{ release, chart, version string }

func (c chartRelease) fullname() string {
	if strings.Contains(c.release, c.chart) {
		return c.release
	}
	return c.release + "-" + c.chart
}

// service is the chart's client Service; headless its headless one (routes, and each
// server's DNS name: <pod>.<headless>).
func (c chartRelease) service() string  { return c.fullname() }
func (c chartRelease) headless() string { return c.fullname() + "-headless" }

func (c chartRelease) serverLabels() map[string]string {
	return map[string]string{"app.kubernetes.io/name": c.chart, "app.kubernetes.io/instance": c.release, "app.kubernetes.io/component": "nats"}
}

// boxLabels are nats-box's, with the label values.yaml merges in to make it a NATS client.
func (c chartRelease) boxLabels() map[string]string {
	return map[string]string{"app.kubernetes.io/name": c.chart, "app.kubernetes.io/instance": c.release, "app.kubernetes.io/component": "nats-box",
		"suitegen.dev/nats-client": "true"}
}

// natsTLS is a tls block of the chart's config.
type natsTLS struct {
	Enabled    bool           `json:"enabled"`
	SecretName string         `json:"secretName"`
	Dir        string         `json:"dir"`
	Merge      map[string]any `json:"merge"`
}

// chartValues are the chart values the tests check, from the defaults with values.yaml merged
// over them as helm does.
type chartValues struct {
	NameOverride     string `json:"nameOverride"`
	FullnameOverride string `json:"fullnameOverride"`
	TLSCA            struct {
		Enabled    bool   `json:"enabled"`
		SecretName string `json:"secretName"`
		Key        string `json:"key"`
	} `json:"tlsCA"`
	Config struct {
		Cluster struct {
			Enabled   bool `json:"enabled"`
			Replicas  int  `json:"replicas"`
			RouteURLs struct {
				User     string `json:"user"`
				Password string `json:"password"`
				UseFQDN  bool   `json:"useFQDN"`
			} `json:"routeURLs"`
			TLS natsTLS `json:"tls"`
		} `json:"cluster"`
		Nats struct {
			Port int     `json:"port"`
			TLS  natsTLS `json:"tls"`
		} `json:"nats"`
		Jetstream struct {
			Enabled   bool `json:"enabled"`
			FileStore struct {
				Enabled bool   `json:"enabled"`
				Dir     string `json:"dir"`
				PVC     struct {
					Enabled bool   `json:"enabled"`
					Size    string `json:"size"`
				} `json:"pvc"`
				MaxSize string `json:"maxSize"`
			} `json:"fileStore"`
			MemoryStore struct {
				Enabled bool   `json:"enabled"`
				MaxSize string `json:"maxSize"`
			} `json:"memoryStore"`
		} `json:"jetstream"`
		Monitor struct {
			Enabled bool `json:"enabled"`
			Port    int  `json:"port"`
			TLS     struct {
				Enabled bool `json:"enabled"`
			} `json:"tls"`
		} `json:"monitor"`
		Resolver struct {
			Enabled bool `json:"enabled"`
		} `json:"resolver"`
		ServerNamePrefix string         `json:"serverNamePrefix"`
		Merge            map[string]any `json:"merge"`
	} `json:"config"`
	Container struct {
		Image struct {
			Tag    string `json:"tag"`
			Digest string `json:"digest"`
		} `json:"image"`
		Resources corev1.ResourceRequirements `json:"resources"`
		Merge     corev1.Container            `json:"merge"`
	} `json:"container"`
	Reloader struct {
		Enabled bool             `json:"enabled"`
		Merge   corev1.Container `json:"merge"`
	} `json:"reloader"`
	PodTemplate struct {
		Merge corev1.PodTemplateSpec `json:"merge"`
	} `json:"podTemplate"`
	PodDisruptionBudget struct {
		Enabled bool `json:"enabled"`
	} `json:"podDisruptionBudget"`
	Service struct {
		Name string `json:"name"`
	} `json:"service"`
	HeadlessService struct {
		Name string `json:"name"`
	} `json:"headlessService"`
	StatefulSet struct {
		Name string `json:"name"`
	} `json:"statefulSet"`
	NatsBox struct {
		Enabled   bool `json:"enabled"`
		Container struct {
			Merge corev1.Container `json:"merge"`
		} `json:"container"`
		PodTemplate struct {
			Merge corev1.PodTemplateSpec `json:"merge"`
		} `json:"podTemplate"`
	} `json:"natsBox"`
}

// readValues reads a values file strictly (duplicate keys fail) into plain maps.
func readValues(t *testing.T, file string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	v, err := parseValues(b)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return v
}

func parseValues(b []byte) (map[string]any, error) {
	j, err := yaml.YAMLToJSONStrict(b)
	if err != nil {
		return nil, err
	}
	var v map[string]any
	if err := json.Unmarshal(j, &v); err != nil {
		return nil, err
	}
	return v, nil
}

// mergeValues is helm's coalescing of user values over a chart's defaults: maps merge key by
// key, anything else replaces, and null removes the default.
func mergeValues(def, over map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range def {
		out[k] = v
	}
	for k, v := range over {
		if v == nil {
			delete(out, k)
			continue
		}
		dm, dok := out[k].(map[string]any)
		om, ook := v.(map[string]any)
		if dok && ook {
			out[k] = mergeValues(dm, om)
		} else {
			out[k] = v
		}
	}
	return out
}

// natsValues are the chart's values as deployed: its defaults with values.yaml over them.
func natsValues(t *testing.T) chartValues {
	t.Helper()
	merged := mergeValues(readValues(t, natsChartDefaults), readValues(t, filepath.Join("..", natsValuesFile)))
	j, err := json.Marshal(merged)
	if err != nil {
		t.Fatal(err)
	}
	var v chartValues
	if err := json.Unmarshal(j, &v); err != nil {
		t.Fatalf("%s: %v", natsValuesFile, err)
	}
	return v
}

// mergeTypes maps the path of each merge block of the chart to the Kubernetes object the
// chart merges it into; a merge block elsewhere (into the NATS server's own configuration) is
// refused unless listed in natsConfigMerges, since nothing would check it.
var mergeTypes = map[string]func() any{
	"container.merge":                         func() any { return &corev1.Container{} },
	"reloader.merge":                          func() any { return &corev1.Container{} },
	"promExporter.merge":                      func() any { return &corev1.Container{} },
	"natsBox.container.merge":                 func() any { return &corev1.Container{} },
	"podTemplate.merge":                       func() any { return &corev1.PodTemplateSpec{} },
	"natsBox.podTemplate.merge":               func() any { return &corev1.PodTemplateSpec{} },
	"statefulSet.merge":                       func() any { return &appsv1.StatefulSet{} },
	"natsBox.deployment.merge":                func() any { return &appsv1.Deployment{} },
	"service.merge":                           func() any { return &corev1.Service{} },
	"headlessService.merge":                   func() any { return &corev1.Service{} },
	"configMap.merge":                         func() any { return &corev1.ConfigMap{} },
	"podDisruptionBudget.merge":               func() any { return &policyv1.PodDisruptionBudget{} },
	"serviceAccount.merge":                    func() any { return &corev1.ServiceAccount{} },
	"natsBox.serviceAccount.merge":            func() any { return &corev1.ServiceAccount{} },
	"natsBox.contextsSecret.merge":            func() any { return &corev1.Secret{} },
	"natsBox.contentsSecret.merge":            func() any { return &corev1.Secret{} },
	"config.jetstream.fileStore.pvc.merge":    func() any { return &corev1.PersistentVolumeClaim{} },
	"config.resolver.pvc.merge":               func() any { return &corev1.PersistentVolumeClaim{} },
	"podTemplate.topologySpreadConstraints.*": func() any { return &corev1.TopologySpreadConstraint{} },
	"container.resources":                     func() any { return &corev1.ResourceRequirements{} },
	"container.ports.*":                       func() any { return &corev1.ContainerPort{} },
}

// natsConfigMerges are merge blocks into the NATS server's configuration that are checked,
// with the keys allowed in each: a TLS block's (docs.nats.io, "TLS Configuration").
var natsTLSKeys = []string{"cert_file", "key_file", "ca_file", "verify", "verify_and_map", "verify_cert_and_check_known_urls",
	"cipher_suites", "curve_preferences", "insecure", "timeout", "pinned_certs", "handshake_first", "min_version"}

var natsConfigMerges = map[string][]string{
	"config.nats.tls.merge":    natsTLSKeys,
	"config.cluster.tls.merge": natsTLSKeys,
}

// checkValues walks values against the chart's defaults: every key must be one the chart
// has, of the same kind (map, list, scalar of the same type; a default of null takes any
// scalar), and every merge block must decode strictly into what the chart merges it into.
// path holds the keys down to mine (a key may hold dots: kubernetes.io/hostname).
func checkValues(path []string, mine, def any) []string {
	at := strings.Join(path, " > ")
	for pattern, mk := range mergeTypes {
		if matchPath(pattern, path) {
			j, err := json.Marshal(mine)
			if err != nil {
				return []string{fmt.Sprintf("%s: %v", at, err)}
			}
			if err := yaml.UnmarshalStrict(j, mk()); err != nil {
				return []string{fmt.Sprintf("%s: %v", at, err)}
			}
			return nil
		}
	}
	if keys, ok := natsConfigMerges[strings.Join(path, ".")]; ok {
		m, ok := mine.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s: not a map", at)}
		}
		var errs []string
		for k := range m {
			if !slices.Contains(keys, k) {
				errs = append(errs, fmt.Sprintf("%s: unknown key %q of a NATS tls block", at, k))
			}
		}
		return errs
	}
	if n := len(path); n > 0 && (path[n-1] == "merge" || path[n-1] == "patch") {
		return []string{fmt.Sprintf("%s: a merge or patch block the tests do not check (teach mergeTypes what it is)", at)}
	}
	switch m := mine.(type) {
	case map[string]any:
		d, ok := def.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s: a map where the chart has %T", at, def)}
		}
		var errs []string
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			p := append(slices.Clone(path), k)
			dv, ok := d[k]
			if !ok && matchAny(p) {
				dv, ok = nil, true // a key of a free map the chart fills in (e.g. a topology key)
			}
			if !ok {
				errs = append(errs, fmt.Sprintf("%s: the chart has no such value", strings.Join(p, " > ")))
				continue
			}
			errs = append(errs, checkValues(p, m[k], dv)...)
		}
		return errs
	case []any:
		if _, ok := def.([]any); !ok {
			return []string{fmt.Sprintf("%s: a list where the chart has %T", at, def)}
		}
		if len(m) > 0 {
			return []string{fmt.Sprintf("%s: a non-empty list the tests do not check", at)}
		}
		return nil
	default:
		if def == nil {
			return nil
		}
		if fmt.Sprintf("%T", mine) != fmt.Sprintf("%T", def) {
			return []string{fmt.Sprintf("%s: %T %v where the chart has %T %v", at, mine, mine, def, def)}
		}
		return nil
	}
}

// matchPath matches keys against a dotted pattern whose * stands for any one key.
func matchPath(pattern string, path []string) bool {
	pp := strings.Split(pattern, ".")
	if len(pp) != len(path) {
		return false
	}
	for i := range pp {
		if pp[i] != "*" && pp[i] != path[i] {
			return false
		}
	}
	return true
}

// matchAny: path is one of the mergeTypes with a * in it.
func matchAny(path []string) bool {
	for pattern := range mergeTypes {
		if strings.Contains(pattern, "*") && matchPath(pattern, path) {
			return true
		}
	}
	return false
}

// TestNATSValuesDecodeStrictly: values.yaml sets only values the chart has, with their types,
// and each merge block is a valid fragment of the Kubernetes object it is merged into.
func TestNATSValuesDecodeStrictly(t *testing.T) {
	def := readValues(t, natsChartDefaults)
	mine := readValues(t, filepath.Join("..", natsValuesFile))
	if len(mine) < 5 {
		t.Fatalf("%s sets only %d values", natsValuesFile, len(mine))
	}
	for _, e := range checkValues(nil, mine, def) {
		t.Error(e)
	}
	if !strings.Contains(readFile(t, natsChartDefaults), "version "+natsChart.version) {
		t.Errorf("%s is not the chart's values at version %s", natsChartDefaults, natsChart.version)
	}
	if !strings.Contains(readFile(t, filepath.Join("..", natsValuesFile)), "--version "+natsChart.version) {
		t.Errorf("%s does not say which chart version it is for (%s)", natsValuesFile, natsChart.version)
	}
}

// TestNATSValuesCheckCanFail: the check refuses a misspelt key, a wrong type, an unknown field
// in a merge block, a NATS tls key that does not exist, and an unchecked merge block.
func TestNATSValuesCheckCanFail(t *testing.T) {
	def := readValues(t, natsChartDefaults)
	for name, doc := range map[string]string{
		"unknown key":         "config: {jetstream: {enbled: true}}",
		"wrong type":          "config: {cluster: {replicas: three}}",
		"map for scalar":      "podDisruptionBudget: {enabled: {yes: 1}}",
		"merge unknown field": "container: {merge: {securityContext: {allowPrivilegeEscalaton: false}}}",
		"merge wrong type":    "podTemplate: {merge: {spec: {automountServiceAccountToken: nope}}}",
		"tls unknown key":     "config: {nats: {tls: {merge: {verfy: true}}}}",
		"unchecked merge":     "config: {merge: {max_payload: 8MB}}",
		"resources":           "container: {resources: {requests: {cpu: 1}, limit: {cpu: 2}}}",
		"duplicate key":       "natsBox: {enabled: true, enabled: false}",
	} {
		mine, err := parseValues([]byte(doc))
		if err != nil {
			t.Logf("%s: %v", name, err)
			continue
		}
		if errs := checkValues(nil, mine, def); len(errs) == 0 {
			t.Errorf("%s: %q passed", name, doc)
		} else {
			t.Logf("%s: %v", name, errs)
		}
	}
	ok, _ := parseValues([]byte("config: {cluster: {enabled: true, replicas: 5}, nats: {tls: {secretName: x, merge: {timeout: 2}}}}"))
	if errs := checkValues(nil, ok, def); len(errs) > 0 {
		t.Errorf("valid values refused: %v", errs)
	}
}

// TestNATSValuesMatchManifests: the chart's servers are what the production overlay's
// processes and KEDA expect: the Service and port of SUITEGEN_NATS_URL, TLS with a certificate
// from the Secret whose CA the clients verify with (--nats-tls-ca), no client certificate or
// credentials unless the manifests pass them, the queue's replicas, file storage, the
// monitoring port KEDA reads, a PodDisruptionBudget, resources, and the labels the
// NetworkPolicy nats selects.
func TestNATSValuesMatchManifests(t *testing.T) {
	v := natsValues(t)
	objs := deployed(t, "k8s/overlays/production", loadSchemas(t))
	if v.NameOverride != "" || v.FullnameOverride != "" || v.Service.Name != "" || v.HeadlessService.Name != "" || v.StatefulSet.Name != "" {
		t.Error("values rename the chart's objects: the manifests name nats, nats-headless")
	}
	if v.Config.ServerNamePrefix != "" {
		t.Error("serverNamePrefix set: KEDA takes a server's name for its pod's DNS name")
	}

	// Clients reach the chart's client Service over TLS.
	shared := configMap(objs, "suitegen-shared").Data
	u, err := url.Parse(shared["SUITEGEN_NATS_URL"])
	if err != nil {
		t.Fatal(err)
	}
	if want := natsChart.service() + "." + namespace + ".svc.cluster.local"; u.Hostname() != want {
		t.Errorf("SUITEGEN_NATS_URL host %s, want the chart's Service %s", u.Hostname(), want)
	}
	if u.Port() != strconv.Itoa(v.Config.Nats.Port) {
		t.Errorf("SUITEGEN_NATS_URL port %s, chart's client port %d", u.Port(), v.Config.Nats.Port)
	}
	if (u.Scheme == "tls") != v.Config.Nats.TLS.Enabled {
		t.Errorf("SUITEGEN_NATS_URL scheme %s but the chart's client TLS enabled=%v", u.Scheme, v.Config.Nats.TLS.Enabled)
	}
	// The servers' certificate and the CA they verify routes with come from nats-tls, whose
	// ca.crt every client verifies the server with (checkNATSClients).
	if !v.Config.Nats.TLS.Enabled || v.Config.Nats.TLS.SecretName != "nats-tls" {
		t.Errorf("chart client TLS %+v, want enabled with the Secret nats-tls", v.Config.Nats.TLS)
	}
	if !v.TLSCA.Enabled || v.TLSCA.SecretName != "nats-tls" || v.TLSCA.Key != "ca.crt" {
		t.Errorf("chart tlsCA %+v, want the ca.crt of nats-tls", v.TLSCA)
	}
	// Client certificates and credentials: required by the servers exactly when the
	// manifests give them.
	var certs, creds bool
	for _, tpl := range podSpecs(objs) {
		for _, c := range tpl.Spec.Containers {
			_, hasCert := flagValue(c.Args, "--nats-tls-cert")
			_, hasCreds := flagValue(c.Args, "--nats-creds")
			certs, creds = certs || hasCert, creds || hasCreds
		}
	}
	if verify := v.Config.Nats.TLS.Merge["verify"] == true || v.Config.Nats.TLS.Merge["verify_and_map"] == true; verify != certs {
		t.Errorf("the servers require client certificates: %v; the manifests pass --nats-tls-cert: %v", verify, certs)
	}
	_, authz := v.Config.Merge["authorization"]
	_, accounts := v.Config.Merge["accounts"]
	if auth := v.Config.Resolver.Enabled || authz || accounts; auth != creds {
		t.Errorf("the servers require credentials: %v; the manifests pass --nats-creds: %v", auth, creds)
	}

	// Three servers with TLS routes by full name; the queue on all of them.
	c := v.Config.Cluster
	if !c.Enabled || c.Replicas < 3 || !c.TLS.Enabled || c.TLS.SecretName != "nats-tls" || !c.RouteURLs.UseFQDN {
		t.Errorf("chart cluster %+v: want enabled, 3 or more servers, TLS routes with nats-tls by full DNS name", c)
	}
	if got := shared["SUITEGEN_QUEUE_REPLICAS"]; got != strconv.Itoa(min(c.Replicas, 5)) {
		t.Errorf("SUITEGEN_QUEUE_REPLICAS %s on %d servers", got, c.Replicas)
	}

	// Slices on disk, within the volume.
	js := v.Config.Jetstream
	if !js.Enabled || !js.FileStore.Enabled || !js.FileStore.PVC.Enabled {
		t.Errorf("chart jetstream %+v: want file storage on a volume", js)
	} else if js.FileStore.MaxSize != "" {
		maxSize, err1 := resource.ParseQuantity(js.FileStore.MaxSize)
		size, err2 := resource.ParseQuantity(js.FileStore.PVC.Size)
		if err1 != nil || err2 != nil || maxSize.Cmp(size) > 0 {
			t.Errorf("jetstream maxSize %s beyond its volume %s (%v %v)", js.FileStore.MaxSize, js.FileStore.PVC.Size, err1, err2)
		}
	}

	// KEDA reads /jsz of each server through the headless Service, over plain HTTP.
	if !v.Config.Monitor.Enabled || v.Config.Monitor.Port != 8222 || v.Config.Monitor.TLS.Enabled {
		t.Errorf("chart monitor %+v: want plain HTTP on 8222", v.Config.Monitor)
	}
	for _, o := range objs {
		if o.kind == "ScaledObject" {
			md := o.typed.(map[string]any)["spec"].(map[string]any)["triggers"].([]any)[0].(map[string]any)["metadata"].(map[string]any)
			if want := fmt.Sprintf("%s.%s.svc.cluster.local:%d", natsChart.headless(), namespace, v.Config.Monitor.Port); md["natsServerMonitoringEndpoint"] != want {
				t.Errorf("KEDA reads %v, want %s", md["natsServerMonitoringEndpoint"], want)
			}
		}
	}

	if !v.PodDisruptionBudget.Enabled {
		t.Error("the chart's PodDisruptionBudget is off")
	}

	// Resources and restrictions of every container the chart runs.
	nats := v.Container.Merge
	nats.Resources = v.Container.Resources
	containers := map[string]corev1.Container{"nats": nats}
	if v.Reloader.Enabled {
		containers["reloader"] = v.Reloader.Merge
	}
	if v.NatsBox.Enabled {
		containers["nats-box"] = v.NatsBox.Container.Merge
	}
	for name, c := range containers {
		for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			req, hasReq := c.Resources.Requests[r]
			lim, hasLim := c.Resources.Limits[r]
			if !hasReq || !hasLim || req.Cmp(lim) > 0 {
				t.Errorf("chart container %s: %s request %v limit %v", name, r, req.String(), lim.String())
			}
		}
		if c.SecurityContext == nil || c.SecurityContext.AllowPrivilegeEscalation == nil || *c.SecurityContext.AllowPrivilegeEscalation {
			t.Errorf("chart container %s: allowPrivilegeEscalation not false", name)
		}
	}
	if p := v.PodTemplate.Merge.Spec.SecurityContext; p == nil || p.RunAsNonRoot == nil || !*p.RunAsNonRoot {
		t.Error("the NATS servers may run as root")
	}

	// The NetworkPolicy nats selects the servers, not nats-box; nats-box is a client.
	np := find[networkingv1.NetworkPolicy](objs, "NetworkPolicy", "nats")
	if np == nil || !labelsMatch(np.Spec.PodSelector.MatchLabels, natsChart.serverLabels()) || labelsMatch(np.Spec.PodSelector.MatchLabels, natsChart.boxLabels()) {
		t.Errorf("NetworkPolicy nats does not select exactly the chart's servers")
	}
	if v.NatsBox.Enabled && v.NatsBox.PodTemplate.Merge.Labels["suitegen.dev/nats-client"] != "true" {
		t.Error("nats-box is not labelled a NATS client: the NetworkPolicy keeps it out")
	}
}
