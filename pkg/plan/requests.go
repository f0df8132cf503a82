package plan

import (
	"slices"

	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/scenario"
)

// Real calls carry more than one request. A share of the suite's buckets
// are buckets of two requests: the caller asks for the bucket's own act
// and, in the same conversation, for an act of another use case on the
// same record, which the plan dealt (for that record) as a bucket of its
// own. A refused first request writes nothing, so the second meets the
// world its own bucket was planned on; those pairs come first. Only where
// the contract has such acts does the plan deal them.

// RequestShare is the share of the asked scenarios the plan deals as
// conversations of two requests, where the contract has acts that can
// follow each other: above a tenth, so that a suite holds a tenth after the
// conversations a writer falls back to one request on (a cancelled order
// that can no longer be modified; a second request the caller's words do
// not ask for).
const RequestShare = 0.15

// Next is a bucket's second request: another use case's bucket on the
// same templates, at its level, as that bucket is dealt.
type Next struct {
	UseCase string `json:"use_case"`
	Angle   string `json:"angle"`
	Outcome string `json:"outcome"`
	Kind    string `json:"kind"`
	// Spec is the second request's bucket spec without the plan's
	// bookkeeping: a case of the bucket takes the first request's index,
	// caller and record.
	Spec Spec `json:"spec"`
}

// pairRequests gives buckets a second request until RequestShare of the
// ask is dealt as two requests. A first request is a plain refusal, else a
// plain success (inbound, no overlay, an act that does not end the
// conversation, not asked again); its second another use case's inbound
// bucket of another tool, without overlay, on the same
// table whose templates hold some of the templates the first's cases take,
// so those cases' records are ones the second request was planned on (a
// case on another template is written as one request, and only the cases
// on shared templates count towards the share); neither takes a record
// from outside the case (another person's order), which would make the
// conversation about two callers. Buckets are taken in the plan's order,
// each second use case paired once before any twice.
func (p *Plan) pairRequests(c *contract.Contract) {
	target := int(float64(p.Asked)*RequestShare + 0.5)
	if target == 0 {
		return
	}
	plain := func(b *Bucket) bool {
		t := c.Tool(b.Spec.Tool)
		for _, ch := range b.Spec.Choices {
			if ch.Outside != "" {
				return false
			}
		}
		return b.Spec.Answer == "" && b.Overlay == "none" && b.Spec.Table != "" && b.Spec.Then == "" &&
			len(b.Spec.Templates) > 0 && b.Spec.Next == nil && t != nil && !t.EndsConversation
	}
	// A request on the caller's own record whose act takes nothing but the
	// caller's key (which payment methods they have) names no record and
	// states no value: in a conversation of two, nothing the caller says
	// in it asks for it, and the prover refuses it as unasked (first or
	// second), so every such conversation cost a correction before
	// falling back to one request.
	callerOnly := func(b *Bucket) bool {
		cl, t := c.Caller, c.Tool(b.Spec.Tool)
		if cl == nil || t == nil || b.Spec.Table != cl.Table {
			return false
		}
		for _, n := range t.ParamNames() {
			if tb, _, ok := c.RefOf(t.Name, n); !t.LogOnlyParam(n) && (!ok || tb != cl.Table) {
				return false
			}
		}
		return true
	}
	used := map[string]int{} // second use case -> times paired
	most := 0                // the most times any was paired
	dealt := 0
	// Refusals first: they write nothing, so the second request meets the
	// world it was planned on. Then successes, whose second act is
	// another tool's on the record the first changed (change flights, then
	// add bags): the prover says whether it still goes as planned, and a
	// writer falls back to one request where it does not.
	for _, first := range []string{scenario.OutcomeRefuse, scenario.OutcomeSucceed} {
		// Rounds go on while one pairs something, and past those in which
		// every second use case was already paired as often (by the
		// refusals' rounds) and so none could.
		for round, more := 0, true; (more || round <= most) && dealt < target; round++ {
			more = false
			for i := range p.Buckets {
				a := &p.Buckets[i]
				if dealt >= target {
					return
				}
				if a.Want == 0 || a.Outcome != first || first == scenario.OutcomeRefuse && a.Spec.Refusal == "" ||
					len(a.Spec.Prior) > 0 || !plain(a) || callerOnly(a) {
					continue
				}
				for j := range p.Buckets {
					b := &p.Buckets[j]
					if b.UseCase == a.UseCase || b.Spec.Tool == a.Spec.Tool || b.Spec.Table != a.Spec.Table ||
						used[b.UseCase] > round || !plain(b) || len(b.Spec.Prior) > 0 || callerOnly(b) ||
						(b.Outcome != scenario.OutcomeSucceed && b.Outcome != scenario.OutcomeRefuse) {
						continue
					}
					// The cases whose template b also holds are written as two
					// requests; the rest fall back to one.
					lead := a.Spec.Templates[:min(a.Want, len(a.Spec.Templates))]
					both := shared(lead, b.Spec.Templates)
					if both == 0 {
						continue
					}
					spec := b.Spec
					spec.Base, spec.Sized, spec.Capacity, spec.TopUp, spec.Spans, spec.Next = 0, 0, 0, 0, nil, nil
					a.Spec.Next = &Next{UseCase: b.UseCase, Angle: b.Angle, Outcome: b.Outcome, Kind: b.Kind, Spec: spec}
					used[b.UseCase]++
					most = max(most, used[b.UseCase])
					dealt += a.Want * both / len(lead)
					more = true
					break
				}
			}
		}
	}
}

// shared counts the templates of want that have holds.
func shared(want, have []string) int {
	n := 0
	for _, w := range want {
		if slices.Contains(have, w) {
			n++
		}
	}
	return n
}
