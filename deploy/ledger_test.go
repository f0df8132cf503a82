package deploy

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/suitegen/suitegen/pkg/migrate"
)

// The operator and plugin versions whose CRDs are in testdata/crds, and which docs/DEPLOY.md
// installs.
const (
	cnpgVersion         = "1.30.0"
	barmanPluginVersion = "0.14.0"
	barmanPlugin        = "barman-cloud.cloudnative-pg.io"
)

// setupSQLFile is the one-time database setup both databases run on bootstrap.
const setupSQLFile = "k8s/base/postgres/setup.sql"

// get walks a decoded custom resource.
func get(v any, path ...string) any {
	for _, p := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[p]
	}
	return v
}

func str(v any, path ...string) string { s, _ := get(v, path...).(string); return s }

func crd(objs []object, kind, name string) map[string]any {
	for _, o := range objs {
		if o.kind == kind && o.name == name {
			if m, ok := o.typed.(map[string]any); ok {
				return m
			}
		}
	}
	return nil
}

func crds(objs []object, kind string) []map[string]any {
	var out []map[string]any
	for _, o := range objs {
		if m, ok := o.typed.(map[string]any); ok && o.kind == kind {
			out = append(out, m)
		}
	}
	return out
}

// TestLedgerCluster: the production ledger is a CloudNativePG Cluster fit for a ledger:
// replicated synchronously with a quorum for failover, a PodDisruptionBudget, no network
// superuser, the application role and one-time setup the processes need, WAL archiving and
// scheduled base backups to an object store with credentials from a Secret.
func TestLedgerCluster(t *testing.T) {
	schemas := loadSchemas(t)
	objs := build(t, "k8s/overlays/production", schemas)
	c := crd(objs, "Cluster", ledgerCluster)
	if c == nil {
		t.Fatalf("production has no Cluster %s", ledgerCluster)
	}
	spec := c["spec"]
	n, _ := get(spec, "instances").(float64)
	if n < 3 {
		t.Errorf("instances %v: a ledger needs a primary and two standbys", n)
	}
	// The PostgreSQL major version the small overlay and the tests run.
	pgMajor := regexp.MustCompile(`:(\d+)(\.|-|$)`)
	small := build(t, "k8s/overlays/small", schemas)
	if m, s := pgMajor.FindStringSubmatch(str(spec, "imageName")), pgMajor.FindStringSubmatch(images(find[appsv1.StatefulSet](small, "StatefulSet", "postgres"))[0]); m == nil || s == nil || m[1] != s[1] {
		t.Errorf("the ledger runs %s, the small overlay %v: one PostgreSQL major version", str(spec, "imageName"), s)
	}

	// Every acknowledged commit is on a standby, writes wait rather than go unreplicated, and a
	// standby is promoted only when it is known to hold every such commit.
	sync := get(spec, "postgresql", "synchronous")
	num, _ := get(sync, "number").(float64)
	if m := str(sync, "method"); (m != "any" && m != "first") || num < 1 || num >= n {
		t.Errorf("synchronous %v: want method any or first, 1 <= number < instances", sync)
	}
	if d := str(sync, "dataDurability"); d != "" && d != "required" {
		t.Errorf("synchronous dataDurability %q: a ledger requires it", d)
	}
	if get(sync, "failoverQuorum") != true {
		t.Error("failoverQuorum off: a failover may promote a standby without the last commits")
	}
	if get(spec, "enablePDB") == false {
		t.Error("enablePDB false: a node drain may take the primary")
	}
	if get(spec, "enableSuperuserAccess") == true || get(spec, "superuserSecret") != nil {
		t.Error("the superuser takes connections: suitegen never needs it")
	}
	if str(spec, "affinity", "podAntiAffinityType") != "required" {
		t.Error("instances may share a node")
	}
	var res corev1.ResourceRequirements
	if b, _ := json.Marshal(get(spec, "resources")); json.Unmarshal(b, &res) != nil || res.Requests.Memory().IsZero() || res.Limits.Memory().Cmp(*res.Requests.Memory()) < 0 {
		t.Errorf("resources %v: want memory requests within limits", get(spec, "resources"))
	}

	// The application role suitegen owns the database suitegen; the operator keeps its
	// credentials in <cluster>-app (no secret of ours), which the processes read.
	initdb := get(spec, "bootstrap", "initdb")
	if str(initdb, "database") != "suitegen" || str(initdb, "owner") != "suitegen" || get(initdb, "secret") != nil {
		t.Errorf("bootstrap.initdb %v: want database and owner suitegen, credentials made by the operator", initdb)
	}
	if operatorSecrets[0] != ledgerCluster+"-app" || operatorSecrets[1] != ledgerCluster+"-ca" {
		t.Errorf("the processes read %v; the operator makes %s-app and %s-ca", operatorSecrets, ledgerCluster, ledgerCluster)
	}
	// The setup runs once, from the file the small overlay runs too: nothing inline.
	for _, k := range []string{"postInitSQL", "postInitTemplateSQL", "postInitApplicationSQL", "postInitSQLRefs", "postInitTemplateSQLRefs"} {
		if get(initdb, k) != nil {
			t.Errorf("bootstrap.initdb.%s: the setup has one source, %s", k, setupSQLFile)
		}
	}
	refs, _ := get(initdb, "postInitApplicationSQLRefs", "configMapRefs").([]any)
	if len(refs) != 1 || get(initdb, "postInitApplicationSQLRefs", "secretRefs") != nil {
		t.Fatalf("postInitApplicationSQLRefs %v: want the setup ConfigMap alone", get(initdb, "postInitApplicationSQLRefs"))
	}
	cm := find[corev1.ConfigMap](objs, "ConfigMap", str(refs[0], "name"))
	if cm == nil || cm.Data[str(refs[0], "key")] != readFile(t, setupSQLFile) {
		t.Errorf("postInitApplicationSQLRefs %v is not a ConfigMap holding %s (a generated name with a hash is not followed)", refs[0], setupSQLFile)
	}

	// WAL archiving and base backups through the Barman Cloud plugin.
	plugins, _ := get(spec, "plugins").([]any)
	if len(plugins) != 1 || str(plugins[0], "name") != barmanPlugin || get(plugins[0], "isWALArchiver") != true {
		t.Fatalf("plugins %v: want %s archiving WAL", plugins, barmanPlugin)
	}
	storeName := str(plugins[0], "parameters", "barmanObjectName")
	store := crd(objs, "ObjectStore", storeName)
	if store == nil {
		t.Fatalf("the plugin archives to ObjectStore %q, which production lacks", storeName)
	}
	cfg := get(store, "spec", "configuration")
	if !regexp.MustCompile(`^(s3|gs)://[^/]+|^https://[^/]+\.blob\.`).MatchString(str(cfg, "destinationPath")) {
		t.Errorf("ObjectStore destinationPath %q is no bucket", str(cfg, "destinationPath"))
	}
	if str(store, "spec", "retentionPolicy") == "" {
		t.Error("ObjectStore keeps base backups forever")
	}
	if str(cfg, "wal", "compression") == "" {
		t.Error("WAL archived uncompressed")
	}
	creds := crdSecretRefs(objs)
	if len(creds) == 0 {
		t.Error("the object store takes no credentials from a Secret")
	}
	for s := range creds {
		if slices.Contains(operatorSecrets, s) {
			t.Errorf("the object store's credentials are in %s, which the operator makes", s)
		}
	}

	backups := crds(objs, "ScheduledBackup")
	if len(backups) == 0 {
		t.Fatal("no ScheduledBackup")
	}
	for _, b := range backups {
		s := b["spec"]
		if str(s, "cluster", "name") != ledgerCluster || str(s, "method") != "plugin" || str(s, "pluginConfiguration", "name") != barmanPlugin {
			t.Errorf("ScheduledBackup %v: want cluster %s by the %s plugin", s, ledgerCluster, barmanPlugin)
		}
		// Six fields, seconds first (robfig/cron with seconds, as CloudNativePG parses it).
		if f := strings.Fields(str(s, "schedule")); len(f) != 6 {
			t.Errorf("ScheduledBackup schedule %q: want six fields, seconds first", str(s, "schedule"))
		}
	}

	// The small overlay's stand-in answers at the same Service name, so the URL layout of
	// ledger-app is the same.
	if find[corev1.Service](small, "Service", ledgerCluster+"-rw") == nil {
		t.Errorf("small has no Service %s-rw", ledgerCluster)
	}
}

// TestLedgerRestore: the restore overlay is production with the Cluster bootstrapped from the
// production archive (same object store, same server name, same database and owner), archiving
// under a server name of its own; every other object is production's, unchanged.
func TestLedgerRestore(t *testing.T) {
	schemas := loadSchemas(t)
	prod := build(t, "k8s/overlays/production", schemas)
	restore := build(t, "k8s/overlays/production-restore", schemas)
	if len(prod) != len(restore) {
		t.Fatalf("production has %d objects, the restore %d", len(prod), len(restore))
	}
	for i := range prod {
		if prod[i].kind == "Cluster" {
			continue
		}
		if prod[i].kind != restore[i].kind || prod[i].name != restore[i].name || !reflect.DeepEqual(prod[i].typed, restore[i].typed) {
			t.Errorf("the restore changes %s %s", prod[i].kind, prod[i].name)
		}
	}
	p, r := crd(prod, "Cluster", ledgerCluster)["spec"], crd(restore, "Cluster", ledgerCluster)["spec"]
	archive := func(spec any) (store, server string) {
		pl, _ := get(spec, "plugins").([]any)
		if len(pl) != 1 {
			return "", ""
		}
		server = str(pl[0], "parameters", "serverName")
		if server == "" {
			server = ledgerCluster // the plugin's default: the cluster's name
		}
		return str(pl[0], "parameters", "barmanObjectName"), server
	}
	pStore, pServer := archive(p)
	rStore, rServer := archive(r)
	boot, _ := get(r, "bootstrap").(map[string]any)
	rec := boot["recovery"]
	if len(boot) != 1 || rec == nil {
		t.Fatalf("restore bootstrap %v: want recovery alone", boot)
	}
	if str(rec, "database") != str(p, "bootstrap", "initdb", "database") || str(rec, "owner") != str(p, "bootstrap", "initdb", "owner") {
		t.Errorf("restore recovery %v: want production's database and owner", rec)
	}
	var source any
	ext, _ := get(r, "externalClusters").([]any)
	for _, e := range ext {
		if str(e, "name") == str(rec, "source") {
			source = e
		}
	}
	if str(source, "plugin", "name") != barmanPlugin || str(source, "plugin", "parameters", "barmanObjectName") != pStore ||
		str(source, "plugin", "parameters", "serverName") != pServer {
		t.Errorf("recovery source %v: want %s reading %s/%s, where production archives", source, barmanPlugin, pStore, pServer)
	}
	if rStore == "" || rServer == pServer {
		t.Errorf("the restored cluster archives to %s/%s: want a server name other than the one it restores from", rStore, rServer)
	}
}

// TestSetupSQL: the setup both databases run on bootstrap is the role that owns the
// world-role function (migrate.ServerSQL's first statement) and then exactly migrate.SetupSQL;
// the small overlay's roles.sql makes the application role as docs/SECURITY.md says.
func TestSetupSQL(t *testing.T) {
	var code []string
	for _, line := range strings.SplitAfter(readFile(t, setupSQLFile), "\n") {
		if !strings.HasPrefix(line, "-- ") || len(code) > 0 {
			code = append(code, line)
		}
	}
	first, _, _ := strings.Cut(migrate.ServerSQL("suitegen", "suitegen", "x"), "\n")
	if want := first + "\n" + migrate.SetupSQL("suitegen", "suitegen"); strings.Join(code, "") != want {
		t.Errorf("%s is not %q and migrate.SetupSQL:\n%s", setupSQLFile, first, strings.Join(code, ""))
	}
	roles := readFile(t, "k8s/components/postgres-single/roles.sql")
	for _, want := range []string{
		`\getenv app_password SUITEGEN_DB_PASSWORD`,
		`SELECT format('CREATE ROLE suitegen LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE PASSWORD %L', :'app_password') \gexec`,
		"ALTER DATABASE suitegen OWNER TO suitegen;",
	} {
		if !strings.Contains(roles, want) {
			t.Errorf("roles.sql lacks:\n%s", want)
		}
	}
}

// TestOperatorURLVerifiesTheServer: the URL CloudNativePG keeps in <cluster>-app (key fqdn-uri)
// names no sslmode; with the environment the manifests give every database client
// (PGSSLMODE, PGSSLROOTCERT), the driver the processes use connects over TLS only, verifying
// the server's certificate against that CA and its name against the URL's host.
func TestOperatorURLVerifiesTheServer(t *testing.T) {
	objs := build(t, "k8s/overlays/production", loadSchemas(t))
	w := find[appsv1.Deployment](objs, "Deployment", "writer")
	if w == nil {
		t.Fatal("no writer")
	}
	env := map[string]string{}
	for _, e := range w.Spec.Template.Spec.Containers[0].Env {
		if e.ValueFrom == nil {
			env[e.Name] = e.Value
		}
	}
	if env["PGSSLMODE"] == "" || env["PGSSLROOTCERT"] == "" {
		t.Fatalf("the writer's environment sets no PGSSLMODE or PGSSLROOTCERT: %v", env)
	}
	// A CA where the container has it (checkDatabaseClients checks the path is ledger-ca's).
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "ledger-ca"}, IsCA: true,
		BasicConstraintsValid: true, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tpl, tpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	ca := filepath.Join(t.TempDir(), filepath.Base(env["PGSSLROOTCERT"]))
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PGSSLMODE", env["PGSSLMODE"])
	t.Setenv("PGSSLROOTCERT", ca)
	// The shape CloudNativePG 1.30 writes (pkg/specs/secrets.go: fqdn-uri).
	const host = ledgerCluster + "-rw." + namespace + ".svc.cluster.local"
	cfg, err := pgxpool.ParseConfig("postgresql://suitegen:pw@" + host + ":5432/suitegen")
	if err != nil {
		t.Fatal(err)
	}
	tls := cfg.ConnConfig.TLSConfig
	if tls == nil || tls.InsecureSkipVerify || tls.ServerName != host || tls.RootCAs == nil {
		t.Fatalf("TLS %+v: want the server verified against the CA and named %s", tls, host)
	}
	for _, f := range cfg.ConnConfig.Fallbacks {
		if f.TLSConfig == nil {
			t.Errorf("a fallback to %s:%d without TLS", f.Host, f.Port)
		}
	}
}
