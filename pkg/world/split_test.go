package world

import (
	"encoding/json"
	"reflect"
	"testing"
)

// splitRows cuts an array into exactly the elements encoding/json finds.
func FuzzSplitRows(f *testing.F) {
	for _, s := range []string{
		`[]`, ` [ ] `, `[{"a":1}]`, "[{\"a\":\"x,]}\\\"\"}, \n {\"b\":[1,{\"c\":\"]\"}]}]",
		`[1, "two", null, [3, [4]], {"k": {"l": "\\\\"}}]`, `[{"a":1},]`, `[{"a":1}`, `{"a":1}`, `[1] x`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		var want []json.RawMessage
		if json.Unmarshal([]byte(doc), &want) != nil {
			return // not an array: splitRows may say anything but must not panic
		}
		got, err := splitRows("t", doc)
		if err != nil {
			t.Fatalf("splitRows(%q): %v", doc, err)
		}
		w := make([]string, len(want))
		for i, r := range want {
			w[i] = string(r)
		}
		if len(got) == 0 {
			got = nil
		}
		if len(w) == 0 {
			w = nil
		}
		if !reflect.DeepEqual(got, w) {
			t.Fatalf("splitRows(%q) = %q, want %q", doc, got, w)
		}
	})
}
