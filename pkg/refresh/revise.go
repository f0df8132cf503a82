package refresh

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/plan"
	"github.com/suitegen/suitegen/pkg/scenario"
	"github.com/suitegen/suitegen/pkg/suite"
)

// Ask is a revision the builtin writer understands.
type Ask string

// The asks understood. Harder: a bucket of the same use case one step
// harder — an adversarial overlay where there was none, or a refusal,
// question or escalation where the caller got what they wanted (whichever
// adds least). Fresh: another case of the same use case and kind of bucket
// (other records, another caller). Answerer: for a call the agent places,
// a bucket of the same use case whose call someone else answers (the next
// of scenario.Answers after the scenario's: the callee, someone else, a
// voicemail box, a callee who asks to be called back). Noisier: a voice
// agent's, another case like it whose caller is on a worse phone line
// (plan.Noisier).
const (
	AskHarder   Ask = "harder"
	AskFresh    Ask = "fresh"
	AskAnswerer Ask = "answerer"
	AskNoisier  Ask = "noisier"
)

// Asks is the vocabulary, in the order help lists it.
var Asks = []Ask{AskHarder, AskFresh, AskAnswerer, AskNoisier}

func (a Ask) does() string {
	switch a {
	case AskHarder:
		return "is harder than"
	case AskAnswerer:
		return "has another answerer than"
	case AskNoisier:
		return "writes a case on a noisier line like"
	}
	return "writes another case like"
}

// difficulty ranks a bucket or a scenario: an outcome other than success
// counts two, anything but a plain case (an overlay, a kind other than
// happy) one.
func difficulty(outcome, overlay, kind string) int {
	d := 0
	if outcome != scenario.OutcomeSucceed {
		d += 2
	}
	if overlay != "" && overlay != "none" || kind != "" && kind != "happy" {
		d++
	}
	return d
}

// score is how well b answers the ask for old: negative when it does not.
func (a Ask) score(b plan.Bucket, old *scenario.Scenario) int {
	if old == nil {
		return -1
	}
	d, was := difficulty(b.Outcome, b.Overlay, b.Kind), difficulty(old.Expects, "", old.Kind)
	switch a {
	case AskHarder:
		if d <= was {
			return -1
		}
		// The least step up first; a bucket with cases planned before one
		// held in reserve.
		s := 100 - 10*(d-was)
		if b.Want > 0 {
			s++
		}
		return s
	case AskFresh, AskNoisier:
		if b.Outcome != old.Expects || b.Kind != old.Kind {
			return -1
		}
		s := 10
		if b.Angle == angleOf(old.Branch) {
			s += 5
		}
		return s
	case AskAnswerer:
		if old.Outbound == nil || b.Spec.Answer == "" || b.Spec.Answer == old.Outbound.AnsweredBy {
			return -1
		}
		// The next answerer after the scenario's first, a plain case
		// before one with an overlay, one with cases planned before one
		// held in reserve.
		n := len(scenario.Answers)
		at, was := slices.Index(scenario.Answers, b.Spec.Answer), slices.Index(scenario.Answers, old.Outbound.AnsweredBy)
		s := 100 - 10*((at-was+n)%n)
		if b.Overlay == "" || b.Overlay == "none" {
			s += 5
		}
		if b.Want > 0 {
			s++
		}
		return s
	}
	return -1
}

// AskError is an ask refused before anything is spent.
type AskError struct{ Ask, Why string }

func (e *AskError) Error() string {
	return fmt.Sprintf("cannot do %q: %s", e.Ask, e.Why)
}

// ErrAsk is every *AskError.
var ErrAsk = errors.New("ask refused")

// Is makes errors.Is(err, ErrAsk) hold.
func (e *AskError) Is(target error) bool { return target == ErrAsk }

// ParseAsk reads an ask in words: it must name exactly one of Asks ("make
// them harder" is harder); anything else is refused, naming the vocabulary.
// When a model writes (model), an ask that names none of them is taken in
// its words alone: another case like each (fresh), the words carried to the
// model with the bucket (plan.Spec.Ask).
func ParseAsk(text string, model bool) (Ask, error) {
	var found []Ask
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !(r >= 'a' && r <= 'z') }) {
		for _, a := range Asks {
			if Ask(w) == a && !slices.Contains(found, a) {
				found = append(found, a)
			}
		}
	}
	switch {
	case len(found) == 1:
		return found[0], nil
	case len(found) == 0 && model && strings.TrimSpace(text) != "":
		return AskFresh, nil
	case len(found) == 0:
		return "", &AskError{Ask: text, Why: "the builtin writer understands " + AskWords() + "; a model (--model) also takes an ask in other words (docs/REFRESH.md)"}
	}
	return "", &AskError{Ask: text, Why: "it asks for more than one of " + AskWords()}
}

// AskWords is the vocabulary as help and errors list it.
func AskWords() string {
	names := make([]string, len(Asks))
	for i, a := range Asks {
		names[i] = string(a)
	}
	return strings.Join(names, ", ")
}

// fits refuses an ask that cannot apply to scenario sc of contract c: an
// answerer for a call the agent takes, a noisier line for a chat agent.
func (a Ask) fits(c *contract.Contract, sc *scenario.Scenario, text string) error {
	switch {
	case a == AskAnswerer && sc.Outbound == nil:
		return &AskError{Ask: text, Why: fmt.Sprintf("%s is a call the agent takes: only a call the agent places has another answerer", sc.Name)}
	case a == AskNoisier && c.Modality != "voice":
		return &AskError{Ask: text, Why: fmt.Sprintf("agent %s is a %s agent: its callers have no phone line to make noisier", c.Agent, cmp.Or(c.Modality, "chat"))}
	}
	return nil
}

// Fits refuses, before anything runs, an ask that cannot apply to one of
// the named scenarios of w.
func Fits(w *suite.Written, c *contract.Contract, names []string, ask Ask, text string) error {
	for i := range w.Scenarios {
		if slices.Contains(names, w.Scenarios[i].Name) {
			if err := ask.fits(c, &w.Scenarios[i], text); err != nil {
				return err
			}
		}
	}
	return nil
}

// Where keys a --where selection may use.
var WhereKeys = []string{"use_case", "kind", "expects", "bucket"}

// Select names the scenarios of w that only lists, or that match every
// key=value of where. An unknown name or key, or an empty selection, is an
// error.
func Select(w *suite.Written, only []string, where map[string]string) ([]string, error) {
	var out []string
	if len(only) > 0 {
		for _, n := range only {
			if _, ok := w.Raw[n]; !ok {
				return nil, fmt.Errorf("refresh: the suite has no scenario %q", n)
			}
			if !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
		return out, nil
	}
	keys := make([]string, 0, len(where))
	for k := range where {
		if !slices.Contains(WhereKeys, k) {
			return nil, fmt.Errorf("refresh: --where %s: want one of %s", k, strings.Join(WhereKeys, ", "))
		}
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, sc := range w.Scenarios {
		fields := map[string]string{"use_case": sc.UseCase, "kind": sc.Kind, "expects": sc.Expects, "bucket": sc.Bucket}
		ok := true
		for _, k := range keys {
			ok = ok && fields[k] == where[k]
		}
		if ok {
			out = append(out, sc.Name)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("refresh: no scenario of the suite matches the selection")
	}
	return out, nil
}

type revision struct {
	ask  Ask
	text string
	keep func(name string, old []byte) error
}

// Keep sets where a revision's Finish records each replaced scenario's old
// file (with the ask) before writing its replacement: the ledger's history.
func (u *Update) Keep(keep func(name string, old []byte) error) {
	if u.rev != nil {
		u.rev.keep = keep
	}
}

// NewRevision prepares replacing the named scenarios of w, checked against
// c (rep), by ones the ask describes; each keeps its name, and one no
// scenario of the run answers stays as it was. A suite with stale
// scenarios is refused (update it first).
func NewRevision(w *suite.Written, c *contract.Contract, rep Report, names []string, ask Ask, text string) (*Update, error) {
	if len(rep.Stale) > 0 {
		return nil, fmt.Errorf("%w (%d of %d); run with --update first", ErrStaleSuite, len(rep.Stale), rep.Checked)
	}
	u := NewUpdate(w, c, rep)
	u.rev = &revision{ask: ask, text: text}
	u.rep.Stale = nil
	for _, n := range names {
		sc := u.scenario(n)
		if sc == nil {
			return nil, fmt.Errorf("refresh: the suite has no scenario %q", n)
		}
		if err := ask.fits(c, sc, text); err != nil {
			return nil, err
		}
		u.rep.Stale = append(u.rep.Stale, Stale{Name: sc.Name, UseCase: sc.UseCase, Branch: sc.Branch, Bucket: sc.Bucket, Reason: text})
	}
	return u, nil
}
