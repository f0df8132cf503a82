package engine

import (
	"testing"
	"testing/fstest"
)

func TestMemFS(t *testing.T) {
	files := map[string][]byte{
		"contract.yaml":          []byte("agent: x\n"),
		"world/schema.sql":       []byte("CREATE TABLE t (id int);\n"),
		"world/seed/t.jsonl":     []byte("{\"id\": 1}\n"),
		"handlers/a.star":        []byte("def handle(world, args):\n    return {}\n"),
		"subgoals/deep/x/y.star": nil,
	}
	m, err := newMemFS(files)
	if err != nil {
		t.Fatal(err)
	}
	if err := fstest.TestFS(m, "contract.yaml", "world/schema.sql", "world/seed/t.jsonl", "handlers/a.star", "subgoals/deep/x/y.star"); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []map[string][]byte{
		{"../escape": nil},
		{"/abs": nil},
		{"a": nil, "a/b": nil},
		{"a/b": nil, "a": nil},
	} {
		if _, err := newMemFS(bad); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}
