package queue

import (
	"errors"
	"fmt"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/suitegen/suitegen/proto/suitegenv1"
)

// Slice is one unit of work on the queue: which buckets of which run a writer
// should fill, with the material the planner dealt it. It says what to work
// on, never how far the work got: a writer reads the buckets' wants and what
// is credited from the ledger.
//
// The wire form is the generated suitegenv1.Slice; it stays inside this
// package.
type Slice struct {
	// Run is the run's id; it is also the subject token the slice travels on.
	Run string
	// ID is stable across republishes and is the message id, so publishing
	// the same slice twice adds nothing.
	ID string
	// Round is the planning (or review) round the slice was cut in.
	Round int
	// Buckets are the ids of the run's buckets the slice fills.
	Buckets []string
	// Spread is the caller material dealt to the slice.
	Spread Spread
	// TurnBudget is the model turns the writer may spend on the slice.
	TurnBudget int
	// Gap, set on a reviewer's gap slice, says in words what the suite lacks.
	Gap string
	// Lessons are refusal reasons of earlier rounds worth telling writers.
	Lessons []string
}

// Spread is the persona material dealt to one slice, so writers blind to each
// other do not converge on the same callers. It has plan.Spread's fields in
// plan.Spread's order, so either converts to the other.
type Spread struct {
	Initials      []string
	CodePrefixes  []string
	Personalities []string
	Accents       []string
	Styles        []string
	Locations     []string
	// A voice agent's phone lines, and how many callers speak over the agent.
	LineQualities    []string
	BackgroundNoises []string
	Spellings        []string
	TalkOver         int
}

// Check is what publishing requires of a slice: ids that can route and
// deduplicate it.
func (s Slice) Check() error {
	switch {
	case !ValidToken(s.Run):
		return fmt.Errorf("run %q is not a subject token (non-empty, no spaces, dots, '*' or '>')", s.Run)
	case strings.TrimSpace(s.ID) == "":
		return errors.New("slice id is empty")
	}
	return nil
}

// wire is the slice as the generated message.
func (s Slice) wire() *suitegenv1.Slice {
	m := &suitegenv1.Slice{
		RunId: s.Run, SliceId: s.ID, Round: uint32(s.Round), Gap: s.Gap, Lessons: s.Lessons,
		TurnBudget: uint32(s.TurnBudget),
		Spread: &suitegenv1.CallerSpread{NameInitials: s.Spread.Initials, CodePrefixes: s.Spread.CodePrefixes,
			Personalities: s.Spread.Personalities, Accents: s.Spread.Accents, Styles: s.Spread.Styles, Locations: s.Spread.Locations,
			LineQualities: s.Spread.LineQualities, BackgroundNoises: s.Spread.BackgroundNoises, Spellings: s.Spread.Spellings,
			TalkOver: uint32(max(s.Spread.TalkOver, 0))},
	}
	for _, id := range s.Buckets {
		m.Buckets = append(m.Buckets, &suitegenv1.BucketAssignment{BucketId: id})
	}
	return m
}

// fromWire is the slice a generated message holds.
func fromWire(m *suitegenv1.Slice) Slice {
	s := Slice{Run: m.GetRunId(), ID: m.GetSliceId(), Round: int(m.GetRound()), Gap: m.GetGap(),
		Lessons: m.GetLessons(), TurnBudget: int(m.GetTurnBudget())}
	if sp := m.GetSpread(); sp != nil {
		s.Spread = Spread{Initials: sp.GetNameInitials(), CodePrefixes: sp.GetCodePrefixes(), Personalities: sp.GetPersonalities(),
			Accents: sp.GetAccents(), Styles: sp.GetStyles(), Locations: sp.GetLocations(),
			LineQualities: sp.GetLineQualities(), BackgroundNoises: sp.GetBackgroundNoises(), Spellings: sp.GetSpellings(),
			TalkOver: int(sp.GetTalkOver())}
	}
	for _, b := range m.GetBuckets() {
		s.Buckets = append(s.Buckets, b.GetBucketId())
	}
	return s
}

// Encode is the slice's bytes on the wire; the same slice always encodes to
// the same bytes.
func (s Slice) Encode() ([]byte, error) {
	return proto.MarshalOptions{Deterministic: true}.Marshal(s.wire())
}

// Decode turns a stored message back into a slice, refusing anything
// that was not published from a Slice: undecodable bytes, missing ids, a run id
// that disagrees with the subject, or a slice id that disagrees with the
// message id. Protobuf accepts many random byte strings as a message of
// unknown fields, so the id checks are what catch garbage.
func Decode(subject, msgID string, data []byte) (Slice, error) {
	m := new(suitegenv1.Slice)
	if err := proto.Unmarshal(data, m); err != nil {
		return Slice{}, fmt.Errorf("decode slice: %w", err)
	}
	s := fromWire(m)
	if err := s.Check(); err != nil {
		return Slice{}, err
	}
	if i := strings.LastIndexByte(subject, '.'); i < 0 || subject[i+1:] != s.Run {
		return Slice{}, fmt.Errorf("run %q does not match subject %q", s.Run, subject)
	}
	if msgID != s.ID {
		return Slice{}, fmt.Errorf("slice id %q does not match Nats-Msg-Id %q", s.ID, msgID)
	}
	return s, nil
}
