package jetstream

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/suitegen/suitegen/pkg/queue"
)

func FuzzDecodeSlice(f *testing.F) {
	good, err := newSlice("run1", 1).Encode()
	if err != nil {
		f.Fatal(err)
	}
	f.Add("suitegen.slices.run1", "run1/1/1", good)
	f.Add("suitegen.slices.run2", "run1/1/1", good)
	f.Add("suitegen.slices.run1", "", []byte{})
	f.Add("suitegen.slices.run1", "x", []byte("hello"))
	f.Add("run1", "run1/1/1", []byte{0x0a, 0x04, 'r', 'u', 'n', '1', 0x12, 0x01, 'x'})
	f.Fuzz(func(t *testing.T, subject, msgID string, data []byte) {
		s, err := queue.Decode(subject, msgID, data)
		if err != nil {
			return
		}
		// Whatever decodes is routable and consistent with its envelope.
		if s.Check() != nil || s.ID != msgID || !strings.HasSuffix(subject, "."+s.Run) {
			t.Fatalf("accepted inconsistent slice %+v for subject %q msg id %q", s, subject, msgID)
		}
		again, err := s.Encode()
		if err != nil {
			t.Fatal(err)
		}
		s2, err := queue.Decode(subject, msgID, again)
		if err != nil || !reflect.DeepEqual(s, s2) {
			t.Fatalf("re-encoded slice does not decode the same: %v\n%+v\n%+v", err, s, s2)
		}
	})
}

// TestSliceRoundTrip: every field a planner sets comes back as it was.
func TestSliceRoundTrip(t *testing.T) {
	for _, s := range []queue.Slice{newSlice("run1", 3), func() queue.Slice { s := newSlice("run2", 4); s.Gap = "short of want"; return s }()} {
		b, err := s.Encode()
		if err != nil {
			t.Fatal(err)
		}
		got, err := queue.Decode("suitegen.slices."+s.Run, s.ID, b)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, s) {
			t.Fatalf("round trip:\n got %+v\nwant %+v", got, s)
		}
	}
}

// TestSliceRetiredFields: a slice from an earlier planner, which still
// sent the contract (4), the seed (8), its kind (9: 1 work, 2 gap) and a
// send time (12), decodes as the same slice, and no slice is sent with them
// any more.
func TestSliceRetiredFields(t *testing.T) {
	gap := newSlice("run1", 3)
	gap.Gap = "short of want"
	for _, c := range []struct {
		s    queue.Slice
		kind uint64
	}{{newSlice("run1", 2), 1}, {gap, 2}} {
		s := c.s
		b, err := s.Encode()
		if err != nil {
			t.Fatal(err)
		}
		for rest := b; len(rest) > 0; {
			num, _, n := protowire.ConsumeField(rest)
			if n < 0 {
				t.Fatalf("the encoded slice does not parse: %v", protowire.ParseError(n))
			}
			if num == 4 || num == 8 || num == 9 || num == 12 {
				t.Errorf("the encoded slice carries retired field %d", num)
			}
			rest = rest[n:]
		}
		var ref []byte
		ref = protowire.AppendTag(ref, 1, protowire.BytesType)
		ref = protowire.AppendString(ref, "shop-support")
		ref = protowire.AppendTag(ref, 2, protowire.BytesType)
		ref = protowire.AppendString(ref, strings.Repeat("ab", 32))
		old := slices.Clone(b)
		old = protowire.AppendTag(old, 4, protowire.BytesType)
		old = protowire.AppendBytes(old, ref)
		old = protowire.AppendTag(old, 8, protowire.VarintType)
		old = protowire.AppendVarint(old, 7)
		old = protowire.AppendTag(old, 9, protowire.VarintType)
		old = protowire.AppendVarint(old, c.kind)
		old = protowire.AppendTag(old, 12, protowire.VarintType)
		old = protowire.AppendVarint(old, 1_700_000_000)
		got, err := queue.Decode("suitegen.slices."+s.Run, s.ID, old)
		if err != nil || !reflect.DeepEqual(got, s) {
			t.Fatalf("an earlier planner's slice: %v\n got %+v\nwant %+v", err, got, s)
		}
	}
}
