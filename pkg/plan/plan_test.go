package plan

import (
	"fmt"
	"slices"
	"testing"

	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/ground"
)

func TestPersonNamesAreDistinct(t *testing.T) {
	c := &contract.Contract{}
	seen := map[string]int{}
	n := len(FirstNames) * len(LastNames)
	for i := 0; i < n; i++ {
		p := Person(c, i)
		name := p.First + " " + p.Last
		if j, dup := seen[name]; dup {
			t.Fatalf("indices %d and %d share the caller %q", j, i, name)
		}
		seen[name] = i
	}
}

func TestPersonTraitsSpread(t *testing.T) {
	c := &contract.Contract{}
	count := map[string]int{}
	accents := map[string]bool{}
	const n = 200
	for i := 0; i < n; i++ {
		p := Person(c, i)
		count[p.Personality]++
		accents[p.Accent] = true
	}
	for k, v := range count {
		if v > n/4 {
			t.Errorf("personality %q on %d of %d", k, v, n)
		}
	}
	if len(accents) < 4 {
		t.Errorf("%d accents", len(accents))
	}
	own := &contract.Contract{Personas: contract.Personas{Accents: []string{"Welsh", "Kenyan"}}}
	if a := Person(own, 3).Accent; a != "Kenyan" {
		t.Errorf("contract vocabularies win: got accent %q", a)
	}
}

// TestNoisier: a noisier line is the harshest line quality and the loudest
// noise of the lists in use, and a caller who speaks over the agent; the
// rest of the person is kept.
func TestNoisier(t *testing.T) {
	c := &contract.Contract{}
	for i := range 2 * len(BackgroundNoises) {
		p := Person(c, i)
		n := Noisier(c, p)
		if n.LineQuality != LineQualities[len(LineQualities)-1] || !n.TalksOver ||
			n.BackgroundNoise != BackgroundNoises[len(BackgroundNoises)-1] {
			t.Errorf("%d: %+v made noisier is %+v", i, p, n)
		}
		n.LineQuality, n.BackgroundNoise, n.TalksOver = p.LineQuality, p.BackgroundNoise, p.TalksOver
		if n != p {
			t.Errorf("%d: noisier changed more than the line: %+v, was %+v", i, n, p)
		}
	}
	own := &contract.Contract{Personas: contract.Personas{LineQualities: []string{"studio", "tin can"}, BackgroundNoises: []string{"hush", "roar"}}}
	if n := Noisier(own, Person(own, 0)); n.LineQuality != "tin can" || n.BackgroundNoise != "roar" {
		t.Errorf("a contract's own lists: %+v", n)
	}
}

func buckets(ucs map[string]int) []Bucket {
	var out []Bucket
	for _, uc := range []string{"a", "b", "c"} {
		for i := 0; i < ucs[uc]; i++ {
			out = append(out, Bucket{ID: fmt.Sprintf("%s%d", uc, i), UseCase: uc, Want: 4})
		}
	}
	return out
}

func TestSizeSpreadsAndTrims(t *testing.T) {
	all := buckets(map[string]int{"a": 3, "b": 3, "c": 3}) // capacity 36
	got := size(all, 9, nil)
	per := map[string]int{}
	total := 0
	for _, b := range got {
		per[b.UseCase] += b.Want
		total += b.Want
	}
	if total != 9 || per["a"] != 3 || per["b"] != 3 || per["c"] != 3 {
		t.Fatalf("9 over three use cases: %v (total %d)", per, total)
	}
	touched := 0
	for _, b := range got {
		if b.Want > 0 {
			touched++
		}
	}
	if touched != 9 || len(got) != len(all) {
		t.Errorf("a small ask should touch every bucket once and keep the rest at want 0: %d of %d", touched, len(got))
	}
	// Over capacity: everything, unchanged.
	if got := size(all, 100, nil); len(got) != 9 || got[0].Want != 4 {
		t.Errorf("an ask over capacity keeps the whole plan")
	}
	// A steer wins for its use case; the rest is dealt evenly.
	got = size(all, 12, []Steer{{UseCase: "a", Count: 8}})
	per = map[string]int{}
	for _, b := range got {
		per[b.UseCase] += b.Want
	}
	if per["a"] != 8 || per["b"] != 2 || per["c"] != 2 {
		t.Errorf("steer a=8 of 12: got %v", per)
	}
	// Over-asking steer is trimmed from its end.
	got = size(all, 5, []Steer{{UseCase: "b", Count: 4}, {UseCase: "c", Count: 4}})
	per = map[string]int{}
	for _, b := range got {
		per[b.UseCase] += b.Want
	}
	if per["b"] != 4 || per["c"] != 1 || per["a"] != 0 {
		t.Errorf("steer over the ask: got %v", per)
	}
}

// TestSizeReachesEveryWayFirst: two use cases of one act each hold a
// refusal bucket for the same two ways the world says no. A small ask
// gives each way a case before either gets a second, with the same mix of
// outcomes.
func TestSizeReachesEveryWayFirst(t *testing.T) {
	var all []Bucket
	for _, uc := range []string{"a", "b"} {
		all = append(all,
			Bucket{ID: uc + "ok", UseCase: uc, Outcome: "succeed", Overlay: "none", Want: 4},
			Bucket{ID: uc + "x", UseCase: uc, Outcome: "refuse", Overlay: "none", Want: 4, Spec: Spec{Refusal: "x.star:1"}},
			Bucket{ID: uc + "y", UseCase: uc, Outcome: "refuse", Overlay: "none", Want: 4, Spec: Spec{Refusal: "x.star:2"}})
	}
	ways, outcomes := map[string]int{}, map[string]int{}
	for _, b := range size(all, 4, nil) {
		ways[b.Spec.Refusal] += b.Want
		outcomes[b.Outcome] += b.Want
	}
	if ways["x.star:1"] != 1 || ways["x.star:2"] != 1 {
		t.Errorf("4 over two use cases sharing two ways: ways %v, want one case of each", ways)
	}
	if outcomes["succeed"] != 2 || outcomes["refuse"] != 2 {
		t.Errorf("outcomes %v, want two of each as round robin deals them", outcomes)
	}
}

func TestDealNeverTwoFromOneCell(t *testing.T) {
	var open []Open
	for i := 0; i < 10; i++ {
		open = append(open, Open{ID: fmt.Sprintf("b%02d", i), Cell: fmt.Sprintf("cell%d", i%3), Outstanding: 2})
	}
	slices := Deal(Rank(open), 3, 12)
	seen := map[string]bool{}
	for _, s := range slices {
		cells := map[string]bool{}
		for _, b := range s {
			if cells[b.Cell] {
				t.Errorf("slice holds two buckets of %s", b.Cell)
			}
			cells[b.Cell] = true
			if seen[b.ID] {
				t.Errorf("%s dealt twice", b.ID)
			}
			seen[b.ID] = true
		}
	}
	if len(seen) != 10 {
		t.Errorf("dealt %d of 10 buckets", len(seen))
	}
}

func TestRankPrefersUntouchedThemes(t *testing.T) {
	r := Rank([]Open{
		{ID: "b1", Outstanding: 2, ThemeUntouched: 0},
		{ID: "b2", Outstanding: 2, ThemeUntouched: 1},
		{ID: "b0", Outstanding: 2, ThemeUntouched: 0},
	})
	if r[0].ID != "b2" || r[1].ID != "b0" || r[2].ID != "b1" {
		t.Errorf("rank order %v", []string{r[0].ID, r[1].ID, r[2].ID})
	}
}

func TestToolCell(t *testing.T) {
	c := &contract.Contract{Tables: []contract.Table{{Name: "orders"}, {Name: "users"}}}
	for name, want := range map[string]string{
		"cancel_pending_order":     "cancel-order",
		"get_order_details":        "retrieve-order",
		"find_user_id_by_email":    "retrieve-user",
		"transfer_to_human_agents": "handoff-human",
	} {
		tl := &contract.Tool{Name: name, EndsConversation: name == "transfer_to_human_agents"}
		if got := ToolCell(c, tl).ID(); got != want {
			t.Errorf("%s: cell %s, want %s", name, got, want)
		}
	}
}

func TestSteerAngleChoosesBuckets(t *testing.T) {
	all := []Bucket{
		{ID: "a0", UseCase: "a", Angle: "ordinary a", Outcome: "succeed", Overlay: "none", Want: 4},
		{ID: "a1", UseCase: "a", Angle: "a refused while the caller insists", Outcome: "refuse", Overlay: "pressure", Want: 4},
		{ID: "b0", UseCase: "b", Angle: "ordinary b", Outcome: "succeed", Overlay: "none", Want: 4},
	}
	got := size(all, 5, []Steer{{UseCase: "a", Angle: "caller insists under pressure", Count: 3}})
	want := map[string]int{"a0": 0, "a1": 3, "b0": 2}
	for _, b := range got {
		if b.Want != want[b.ID] {
			t.Errorf("%s: want %d, got %d", b.ID, want[b.ID], b.Want)
		}
	}
}

// TestPhoneTraitsSpread: the phone fields are dealt like accents (every
// value of a vocabulary within a run of its length, none on more than its
// share), one caller in TalksOverEvery speaks over the agent, and a voice
// agent's slice spread lists them while a chat agent's does not.
func TestPhoneTraitsSpread(t *testing.T) {
	c := &contract.Contract{Modality: "voice"}
	lines, noises, spellings := map[string]int{}, map[string]int{}, map[string]int{}
	talk := 0
	const n = 210 // a multiple of every built-in vocabulary's length and of TalksOverEvery
	for i := 0; i < n; i++ {
		p := Person(c, i)
		lines[p.LineQuality]++
		noises[p.BackgroundNoise]++
		spellings[p.Spelling]++
		if p.TalksOver {
			talk++
		}
	}
	for _, tc := range []struct {
		name  string
		got   map[string]int
		vocab []string
	}{{"line", lines, LineQualities}, {"noise", noises, BackgroundNoises}, {"spelling", spellings, Spellings}} {
		if len(tc.got) != len(tc.vocab) {
			t.Errorf("%s: %d of %d values dealt", tc.name, len(tc.got), len(tc.vocab))
		}
		for v, k := range tc.got {
			if k != n/len(tc.vocab) {
				t.Errorf("%s %q on %d of %d, want %d", tc.name, v, k, n, n/len(tc.vocab))
			}
		}
	}
	if talk != n/TalksOverEvery {
		t.Errorf("%d of %d talk over the agent, want %d", talk, n, n/TalksOverEvery)
	}
	own := &contract.Contract{Modality: "voice", Personas: contract.Personas{LineQualities: []string{"Satellite phone"}}}
	if q := Person(own, 5).LineQuality; q != "Satellite phone" {
		t.Errorf("contract vocabularies win: got line %q", q)
	}
	s := SpreadFor(c, []int{0, 1, 2, 3})
	if len(s.LineQualities) != 4 || len(s.BackgroundNoises) != 4 || len(s.Spellings) != 4 || s.TalkOver != 1 {
		t.Errorf("voice spread: %+v", s)
	}
	chat := SpreadFor(&contract.Contract{Modality: "chat"}, []int{0, 1, 2, 3})
	if chat.LineQualities != nil || chat.BackgroundNoises != nil || chat.Spellings != nil || chat.TalkOver != 0 {
		t.Errorf("chat spread has phone fields: %+v", chat)
	}
}

// TestLayKeepsHeadroom: an ask near what the planned uses of the templates
// hold gets reserve uses at want 0, so a top-up has a fifth of the ask to
// deal when buckets block; never past the code spaces, never under a user's
// cap, and none when the planned uses already leave that room.
func TestLayKeepsHeadroom(t *testing.T) {
	for _, tc := range []struct {
		name         string
		asked, most  int
		capped       bool
		reuse, spare int
		wantCapacity int
	}{
		{"two uses hold 70 of 72: a third in reserve", 70, 0, false, 2, 1, 108},
		{"room to spare in the first use", 20, 0, false, 1, 0, 36},
		{"first use nearly full", 33, 0, false, 1, 1, 72},
		{"reserve trimmed to the code spaces", 70, 75, false, 2, 1, 75},
		{"no reserve use starts past the code spaces", 70, 72, false, 2, 0, 72},
		{"a user's cap: no reuse, no reserve", 30, 0, true, 1, 0, 36},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &Plan{Most: tc.most}
			p.lay(buckets(map[string]int{"a": 3, "b": 3, "c": 3}), Options{Asked: tc.asked}, tc.capped)
			if p.Reuse != tc.reuse || p.Reserve != tc.spare || p.Capacity != tc.wantCapacity {
				t.Fatalf("reuse %d, reserve %d, capacity %d; want %d, %d, %d", p.Reuse, p.Reserve, p.Capacity, tc.reuse, tc.spare, tc.wantCapacity)
			}
			if got := p.Total(); got != min(tc.asked, 36*tc.reuse) {
				t.Errorf("the plan wants %d, asked %d", got, tc.asked)
			}
			if len(p.Buckets) != 9*(tc.reuse+tc.spare) {
				t.Fatalf("%d buckets, want %d", len(p.Buckets), 9*(tc.reuse+tc.spare))
			}
			end := 0
			for _, b := range p.Buckets[:9*tc.reuse] {
				end = max(end, b.Spec.End(b.Want))
			}
			for _, b := range p.Buckets[9*tc.reuse:] {
				if b.Want != 0 || b.Spec.Capacity != 4 || b.Spec.Base != end {
					t.Errorf("reserve bucket %s: want %d, capacity %d, base %d; want 0, 4, %d", b.ID, b.Want, b.Spec.Capacity, b.Spec.Base, end)
				}
			}
		})
	}
}

// TestRuleTools: a use case no tool's name serves is served by the tool one
// of whose enumerated values the rule it is named after asks for, with that
// value settled; a use case whose rules name none gets nothing.
func TestRuleTools(t *testing.T) {
	c := testContract(t, "clinic-voice")
	rc, ok := RuleTools(c, c.UseCase("third-party-caller"))
	if !ok || rc.Tool != "transfer_to_staff" || rc.Param != "department" || rc.Value != "privacy_officer" {
		t.Errorf("third-party-caller: %+v %v, want transfer_to_staff(department: privacy_officer)", rc, ok)
	}
	if len(UseCaseTools(c, c.UseCase("third-party-caller"), nil)) != 0 {
		t.Error("a tool's name shares a word with third-party-caller")
	}
	if rc, ok := RuleTools(c, c.UseCase("pay-balance")); ok {
		t.Errorf("pay-balance: %+v from rules that name no choice", rc)
	}
}

// TestQuestionsAreServedByReading: a use case that asks to be told
// something (billing-question: "Explain a bill...", referral-status:
// "Explain where a referral stands...") is served by the tool that reads,
// when a tool that writes shares as many of its words (request_billing_review,
// request_referral); a use case that asks for something done still acts.
func TestQuestionsAreServedByReading(t *testing.T) {
	c := testContract(t, "clinic-voice")
	for uc, want := range map[string]string{
		"billing-question": "get_billing_summary",
		"referral-status":  "lookup_referrals",
		"request-referral": "request_referral",
		"pay-balance":      "make_payment",
	} {
		tools := UseCaseTools(c, c.UseCase(uc), nil)
		if len(tools) == 0 || tools[len(tools)-1] != want {
			t.Errorf("%s: tools %v, want %s acting", uc, tools, want)
		}
	}
	for text, asks := range map[string]bool{
		"Explain a bill, what insurance paid and what the patient owes": true,
		"Tell the user where an order is":                               true,
		"Is my refill ready?":                                           true,
		"Request a specialist referral from the patient's provider":     false,
		"Cancel a pending order and refund its payments":                false,
	} {
		if got := Asks(&contract.UseCase{Text: text}); got != asks {
			t.Errorf("Asks(%q) = %v", text, got)
		}
	}
}

// TestEveryRuleReachesADealtBucket: a rule assignRules gave only to buckets
// the ask left at want 0 (a rule of how to talk, naming no tool, that fell
// to an adversarial bucket a small ask never reaches) moves to the dealt
// adversarial buckets in turn, so the plan's check finds it tested; a rule
// a dealt bucket tests stays where it is.
func TestEveryRuleReachesADealtBucket(t *testing.T) {
	c := &contract.Contract{Rules: []contract.Rule{{ID: "kept"}, {ID: "lost"}, {ID: "also-lost"}}}
	bs := []Bucket{
		{ID: "plain", Overlay: "none", Want: 3},
		{ID: "dealt", Overlay: "pressure", Want: 2, Spec: Spec{Rules: []string{"kept"}}},
		{ID: "dealt2", Overlay: "injection", Want: 1},
		{ID: "reserve", Overlay: "pressure", Want: 0, Spec: Spec{Rules: []string{"lost", "also-lost"}}},
	}
	rehomeRules(c, bs)
	want := map[string][]string{"plain": nil, "dealt": {"kept", "lost"}, "dealt2": {"also-lost"}, "reserve": {"lost", "also-lost"}}
	for _, b := range bs {
		if !slices.Equal(b.Spec.Rules, want[b.ID]) {
			t.Errorf("%s: rules %v, want %v", b.ID, b.Spec.Rules, want[b.ID])
		}
	}
	p := &Plan{Buckets: bs}
	if cv := p.Measure(c); len(cv.UntestedRules) > 0 {
		t.Errorf("untested after rehoming: %v", cv.UntestedRules)
	}
}

// TestMeasureNamesEveryToolABucketCalls: a tool with requires that only an
// outbound call's call-later or missed-call answer calls, or that only some
// cases identify their callers with, is named by the bucket that deals those
// cases; a handoff only by an escalation.
func TestMeasureNamesEveryToolABucketCalls(t *testing.T) {
	gated := func(name string) contract.Tool {
		return contract.Tool{Name: name, Requires: []contract.Requirement{{AnyOf: []string{"verify"}}}}
	}
	c := &contract.Contract{Tools: []contract.Tool{{Name: "verify"}, gated("confirm"), gated("schedule_callback"), gated("log_attempt"), gated("verify_too"), gated("transfer")}}
	p := &Plan{Buckets: []Bucket{
		{ID: "call", Outcome: "succeed", Want: 1, Spec: Spec{Tools: []string{"verify", "confirm"}, Tool: "confirm", Gated: []string{"verify"},
			CallLater: "schedule_callback", MissedCall: "log_attempt", Identify: []string{"verify_too"}, Handoff: "transfer"}},
	}}
	if cv := p.Measure(c); !slices.Equal(cv.UnnamedGated, []string{"transfer"}) {
		t.Errorf("unnamed gated tools %v, want only the handoff no escalation deals", cv.UnnamedGated)
	}
	p.Buckets = append(p.Buckets, Bucket{ID: "hand", Outcome: "escalate", Want: 1, Spec: Spec{Handoff: "transfer"}})
	if cv := p.Measure(c); len(cv.UnnamedGated) > 0 {
		t.Errorf("unnamed gated tools %v with an escalation dealt", cv.UnnamedGated)
	}
	// A use case whose act is the hand-off names it by succeeding.
	p.Buckets[1] = Bucket{ID: "ask-credit", Outcome: "succeed", Want: 1, Spec: Spec{Tools: []string{"verify", "transfer"}, Tool: "transfer", Gated: []string{"verify"}, Handoff: "transfer"}}
	if cv := p.Measure(c); len(cv.UnnamedGated) > 0 {
		t.Errorf("unnamed gated tools %v where a success hands off", cv.UnnamedGated)
	}
}

// TestHandoffGoesToTheTeamTheUseCaseNames: a use case whose text names one
// of a hand-off's teams ("only the credit team can decide") hands its cases
// to that team; a text naming two, or none, leaves the choice open.
func TestHandoffGoesToTheTeamTheUseCaseNames(t *testing.T) {
	c := &contract.Contract{Tools: []contract.Tool{{Name: "transfer", EndsConversation: true, Params: map[string]any{"type": "object", "properties": map[string]any{
		"department": map[string]any{"type": "string", "enum": []any{"fraud", "disputes", "credit", "bereavement"}},
	}}}}}
	for text, want := range map[string][]any{
		"Ask for a higher credit limit, which only the credit team can decide": {"credit"},
		"Report a charge as fraud":   {"fraud"},
		"Dispute a charge":           nil, // "dispute" is not the value "disputes"
		"Ask about fraud and credit": nil,
		"Ask for a statement":        nil,
	} {
		bs := ground.Bindings{{Tool: "transfer", Param: "department", How: ground.ByEnum}}
		namedTeams(c, &contract.UseCase{Text: text}, bs)
		if !slices.Equal(bs[0].Picks, want) {
			t.Errorf("%q: picks %v, want %v", text, bs[0].Picks, want)
		}
	}
}
