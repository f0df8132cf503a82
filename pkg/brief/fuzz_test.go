package brief

import (
	"reflect"
	"testing"
)

// FuzzParse: the builtin model reads briefs and digests out of whatever
// conversation it is sent; no text makes either parser panic, and what
// parses renders back to the same thing.
func FuzzParse(f *testing.F) {
	text, err := Render(Brief{Agent: "a", Buckets: []Bucket{{Have: 1}}})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(text)
	f.Add(fence + "\n" + `{"buckets":[{"id":"b","spec":{"templates":["x"]},"choices":[[1,2],[3,4]]}],"bind_refs":[[0],[1]]}` + "\n```")
	f.Add(fence + "\n" + `{"buckets":[{"id":"b","spec":{"templates":["x","y"]},"choices":[[1,2]],"outside":"t"}]}` + "\n```")
	f.Add(fence + "\n" + `{"buckets":[{"id":"b","spec":{"templates":["x"]},"outside":"t","swap":"held"}]}` + "\n```")
	f.Add(fence + "\n" + `{"buckets":[{"id":"b"}],"binds":[{"tool":"t"}],"bind_refs":[[5]]}` + "\n```")
	f.Add(fence + "\n" + `{"buckets":[{"id":"b","spec":{"next":{"spec":{}}}},{"id":"c","spec":{"strides":{"y":2}}}],"binds":[["t","p","","","enum","",false,null,true],{"tool":"u"}],"bind_refs":[[1]],"next_bind_refs":[[0,1]],"strides":{"x":1}}` + "\n```")
	f.Add(Digest([]Submission{{Name: "n", Bucket: "b", Kept: true}}))
	f.Add(digestHead + "\n{}\n\n")
	f.Fuzz(func(t *testing.T, text string) {
		if b, ok := Parse(text); ok {
			again, ok := Parse(render(t, b))
			if !ok || (len(b.Buckets) > 0 && !reflect.DeepEqual(again.Buckets, b.Buckets)) {
				t.Errorf("a parsed brief does not render back: %+v", b)
			}
		}
		if subs, ok := ParseDigest(text); ok {
			again, ok := ParseDigest(Digest(subs))
			if !ok || len(again) != len(subs) {
				t.Errorf("a parsed digest does not render back: %+v", subs)
			}
		}
	})
}

// render is Render for tests: a brief that cannot be written fails the test.
func render(t testing.TB, b Brief) string {
	t.Helper()
	text, err := Render(b)
	if err != nil {
		t.Fatal(err)
	}
	return text
}
