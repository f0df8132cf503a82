package world

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"runtime"
	"testing"

	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/script"
	"github.com/suitegen/suitegen/pkg/testenv"
)

// The example contract's own sequences are the world's acceptance test: each
// step must end as declared and each query must return the declared rows.
func TestRetailSequences(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(file), "..", "..", "examples", "retail")
	c, problems, err := contract.Load(dir)
	if err != nil || len(problems) > 0 {
		t.Fatalf("load: %v %v", err, problems)
	}
	progs, err := script.Compile(c, script.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	w, err := Open(ctx, testenv.Postgres(t), c, progs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Sequences) == 0 {
		t.Fatal("the example declares no sequences")
	}
	for _, seq := range c.Sequences {
		t.Run(seq.Name, func(t *testing.T) {
			err := w.Copy(ctx, func(cp *Copy) error {
				for i, st := range seq.Steps {
					r := cp.Call(ctx, st.Tool, st.Args)
					switch {
					case st.Expect == "refused" && !r.Refused:
						t.Errorf("step %d %s: want refused, got %+v %s", i+1, st.Tool, r, r.Result)
					case st.Expect == "" && !r.OK:
						t.Errorf("step %d %s: want ok, got %+v", i+1, st.Tool, r)
					}
				}
				for _, ex := range seq.Expect {
					rows, err := cp.ReadQuery(ctx, ex.SQL)
					if err != nil {
						return fmt.Errorf("%s: %w", ex.SQL, err)
					}
					got := make([]any, len(rows))
					for i, r := range rows {
						got[i] = r.Map()
					}
					if !sameJSON(got, ex.Rows) {
						g, _ := json.Marshal(got)
						wnt, _ := json.Marshal(ex.Rows)
						t.Errorf("%s:\n got %s\nwant %s", ex.SQL, g, wnt)
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

// sameJSON compares as JSON values: numbers numerically.
func sameJSON(a, b any) bool {
	norm := func(v any) any {
		raw, _ := json.Marshal(v)
		var out any
		_ = json.Unmarshal(raw, &out)
		return out
	}
	return reflect.DeepEqual(norm(a), norm(b))
}
