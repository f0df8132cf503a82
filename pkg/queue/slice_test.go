package queue

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
)

func FuzzDecodeSlice(f *testing.F) {
	good, err := proto.Marshal(newSlice("run1", 1))
	if err != nil {
		f.Fatal(err)
	}
	f.Add("suitegen.slices.run1", "run1/1/1", good)
	f.Add("suitegen.slices.run2", "run1/1/1", good)
	f.Add("suitegen.slices.run1", "", []byte{})
	f.Add("suitegen.slices.run1", "x", []byte("hello"))
	f.Add("run1", "run1/1/1", []byte{0x0a, 0x04, 'r', 'u', 'n', '1', 0x12, 0x01, 'x'})
	f.Fuzz(func(t *testing.T, subject, msgID string, data []byte) {
		s, err := decodeSlice(subject, msgID, data)
		if err != nil {
			return
		}
		// Whatever decodes is routable and consistent with its envelope.
		if checkSlice(s) != nil || s.GetSliceId() != msgID || !strings.HasSuffix(subject, "."+s.GetRunId()) {
			t.Fatalf("accepted inconsistent slice %v for subject %q msg id %q", s, subject, msgID)
		}
		again, err := proto.MarshalOptions{Deterministic: true}.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		s2, err := decodeSlice(subject, msgID, again)
		if err != nil || !proto.Equal(s, s2) {
			t.Fatalf("re-encoded slice does not decode the same: %v", err)
		}
	})
}
