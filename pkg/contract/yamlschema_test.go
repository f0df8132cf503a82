package contract

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

const docsSchema = "../../docs/contract.schema.json"

// yamlFileValue reads a YAML file as JSON values, the way Load sees them.
func yamlFileValue(t *testing.T, path string) any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var n yaml.Node
	if err := yaml.Unmarshal(data, &n); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var ps Problems
	d := &yamlDoc{r: report{&ps}, budget: yamlNodeBudget}
	v := d.value(n.Content[0])
	if len(ps) > 0 {
		t.Fatalf("%s: %v", path, ps)
	}
	return v
}

// TestSchemaAcceptsContracts: the published schema accepts every contract we
// consider valid, and the loader reads a bare contract.yaml fragment.
func TestSchemaAcceptsContracts(t *testing.T) {
	s, err := CompileSchema()
	if err != nil {
		t.Fatal(err)
	}
	files := []string{"testdata/good/contract.yaml", "testdata/fragment/contract.yaml"}
	examples, _ := filepath.Glob("../../examples/*/contract.yaml")
	files = append(files, examples...)
	for _, f := range files {
		if err := s.Validate(yamlFileValue(t, f)); err != nil {
			t.Errorf("%s: schema rejects it: %v", f, err)
		}
	}

	// The fragment has no world and handlers for only some tools, so
	// cross-reference problems are expected; but nothing about its YAML
	// itself may be wrong.
	_, ps, err := Load("testdata/fragment")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		if p.File == ContractFile {
			switch p.Code {
			case CodeYAMLSyntax, CodeUnknownField, CodeMissingField, CodeBadValue, CodeDuplicateKey,
				CodeUnquotedHash, CodeBadParamsSchema, CodeUnknownSeqExpect:
				t.Errorf("the fragment: %s", p)
			}
		}
	}
}

// TestSchemaRejectsWhatLoadRejects: field-level mistakes are caught by both.
func TestSchemaRejectsWhatLoadRejects(t *testing.T) {
	s, err := CompileSchema()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ dir, at string }{
		{"unknown-field", "/tools/2"}, // retries
		{"many", "/modality"},         // video
		{"no-tools", "/tools"},        // []
		{"requires-cycle", ""},        // a cross-reference: the schema cannot see it
		{"duplicate-tool", ""},        // likewise
	} {
		f := filepath.Join("testdata/bad", tc.dir, "contract.yaml")
		err := s.Validate(yamlFileValue(t, f))
		switch {
		case tc.at == "" && err != nil:
			t.Errorf("%s: schema rejects it: %v", f, err)
		case tc.at != "" && err == nil:
			t.Errorf("%s: schema accepts it", f)
		case tc.at != "" && !strings.Contains(err.Error(), "at '"+tc.at+"'"):
			t.Errorf("%s: schema rejects it, but not at %s: %v", f, tc.at, err)
		}
	}
}

// TestSchemaDocsCopy keeps docs/contract.schema.json byte-identical to the
// embedded schema (go test -update rewrites it).
func TestSchemaDocsCopy(t *testing.T) {
	if *update {
		if err := os.WriteFile(docsSchema, SchemaJSON(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	docs, err := os.ReadFile(docsSchema)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(docs, SchemaJSON()) {
		t.Fatalf("%s differs from pkg/contract/schema.json; run go test ./pkg/contract -run TestSchemaDocsCopy -update", docsSchema)
	}
}

// TestSchemaMatchesLoader: the schema's properties and required lists are the
// loader's field tables, so neither can grow a field the other lacks.
func TestSchemaMatchesLoader(t *testing.T) {
	var root map[string]any
	if err := json.Unmarshal(SchemaJSON(), &root); err != nil {
		t.Fatal(err)
	}
	defs := root["$defs"].(map[string]any)
	objects := map[string]map[string]any{"contract": root}
	for name, d := range defs {
		if m := d.(map[string]any); m["properties"] != nil {
			objects[name] = m
		}
	}
	// The params schema carries properties of its own ("type"); it is not a loader table.
	for kind := range objects {
		if _, ok := knownFields[kind]; !ok {
			t.Errorf("schema object %q has no loader field table", kind)
		}
	}
	for kind, fields := range knownFields {
		obj, ok := objects[kind]
		if !ok {
			t.Errorf("loader field table %q has no schema object", kind)
			continue
		}
		if got, want := keys(obj["properties"]), sorted(fields); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: schema properties %v, loader fields %v", kind, got, want)
		}
		var req []string
		if r, ok := obj["required"].([]any); ok {
			for _, x := range r {
				req = append(req, x.(string))
			}
		}
		if got, want := sorted(req), sorted(requiredFields[kind]); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: schema required %v, loader required %v", kind, got, want)
		}
		if obj["additionalProperties"] != false {
			t.Errorf("%s: schema must not allow additional properties (the loader reports unknown-field)", kind)
		}
	}
	props := root["properties"].(map[string]any)
	if p := props["agent"].(map[string]any)["pattern"]; p != agentPatternText {
		t.Errorf("agent pattern %v, loader %v", p, agentPatternText)
	}
	if p := defs["id"].(map[string]any)["pattern"]; p != idPatternText {
		t.Errorf("id pattern %v, loader %v", p, idPatternText)
	}
	if p := defs["tool_name"].(map[string]any)["pattern"]; p != toolPatternText {
		t.Errorf("tool name pattern %v, loader %v", p, toolPatternText)
	}
}

func keys(v any) []string {
	var out []string
	for k := range v.(map[string]any) {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	if out == nil {
		out = []string{}
	}
	return out
}
