package queue

import (
	"errors"
	"fmt"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/suitegen/suitegen/proto/suitegenv1"
)

// checkSlice is what Publish requires of a slice: ids that can route and
// deduplicate it.
func checkSlice(s *suitegenv1.Slice) error {
	switch {
	case s == nil:
		return errors.New("nil slice")
	case !validToken(s.GetRunId()):
		return fmt.Errorf("run_id %q is not a subject token (non-empty, no spaces, dots, '*' or '>')", s.GetRunId())
	case strings.TrimSpace(s.GetSliceId()) == "":
		return errors.New("slice_id is empty")
	}
	return nil
}

// decodeSlice turns a stored message back into a slice, refusing anything
// that did not come from Publish: undecodable bytes, missing ids, a run id
// that disagrees with the subject, or a slice id that disagrees with the
// message id. Protobuf accepts many random byte strings as a message of
// unknown fields, so the id checks are what catch garbage.
func decodeSlice(subject, msgID string, data []byte) (*suitegenv1.Slice, error) {
	s := new(suitegenv1.Slice)
	if err := proto.Unmarshal(data, s); err != nil {
		return nil, fmt.Errorf("decode slice: %w", err)
	}
	if err := checkSlice(s); err != nil {
		return nil, err
	}
	if i := strings.LastIndexByte(subject, '.'); i < 0 || subject[i+1:] != s.GetRunId() {
		return nil, fmt.Errorf("run_id %q does not match subject %q", s.GetRunId(), subject)
	}
	if msgID != s.GetSliceId() {
		return nil, fmt.Errorf("slice_id %q does not match Nats-Msg-Id %q", s.GetSliceId(), msgID)
	}
	return s, nil
}
