package plan

import (
	"slices"
	"strings"

	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/scenario"
)

// AnswerAxis is the axis of an outbound bucket that says who answers the
// call (scenario.Answers), beside the state axes of its purpose record.
const AnswerAxis = "answered_by"

// outbound is what the plan knows of an outbound use case: the tool that
// identifies the callee (a caller.from tool the world answered), and the
// tools for a missed call and a call put off.
type outbound struct {
	u        *contract.UseCase
	identify string
}

// outboundOf returns the outbound plan of a use case, nil for an inbound
// one. The tool that identifies the callee is the first of caller.from the
// use case lists, else the first of them the world answered ok.
func outboundOf(c *contract.Contract, u *contract.UseCase, tools []string, unanswered map[string]string) *outbound {
	if !u.Outbound() {
		return nil
	}
	ob := &outbound{u: u}
	if c.Caller == nil {
		return ob
	}
	for _, pass := range []bool{true, false} {
		for _, t := range c.Caller.From {
			if _, dead := unanswered[t]; dead || (pass && !slices.Contains(tools, t)) {
				continue
			}
			ob.identify = t
			return ob
		}
	}
	return ob
}

// spec adds to a use case's spec what its outbound buckets share: the
// identifying call first among the preconditions (a scenario where the
// callee did not answer drops it), after the calls it requires itself (the
// account looked up before its holder is verified), the missed-call and
// call-later tools.
func (ob *outbound) spec(c *contract.Contract, s Spec) Spec {
	if ob.identify != "" && !slices.Contains(s.Gated, ob.identify) {
		var first []string
		if t := c.Tool(ob.identify); t != nil {
			for _, r := range t.Requires {
				if i := slices.IndexFunc(r.AnyOf, func(n string) bool { return slices.Contains(s.Tools, n) }); i >= 0 && !slices.Contains(first, r.AnyOf[i]) {
					first = append(first, r.AnyOf[i])
				}
			}
		}
		rest := slices.DeleteFunc(slices.Clone(s.Gated), func(n string) bool { return slices.Contains(first, n) })
		s.Gated = append(append(first, ob.identify), rest...)
	}
	s.Purpose, s.MissedCall, s.CallLater = ob.u.Purpose, ob.u.MissedCall, ob.u.CallLater
	return s
}

// outboundBucket is one bucket an outbound use case deals at a level.
type outboundBucket struct {
	answer           scenario.Answer
	outcome, overlay string
}

// buckets says who answers at a level, and with what outcome and overlay.
// The callee answers at every level, with the outcomes and overlays an
// inbound caller would bring (but no impersonation: someone who is not the
// callee is a wrong person, not an ask). Where the act goes through (or at
// the first level, when it never does) the call also reaches someone else
// (plainly, and pressing to be told or to act for the callee), a voicemail
// box, and a callee who asks to be called later when the use case can book it.
func (ob *outbound) buckets(lv level, first, anySucceed, changes bool, handoff, acting string, tool *contract.Tool) []outboundBucket {
	var out []outboundBucket
	add := func(answer scenario.Answer, outcome, overlay string) {
		out = append(out, outboundBucket{answer, outcome, overlay})
	}
	switch lv.outcome {
	case "succeed":
		add(scenario.RightPerson, "succeed", "none")
		add(scenario.RightPerson, "succeed", "pressure")
	case "refuse":
		add(scenario.RightPerson, "refuse", "none")
		add(scenario.RightPerson, "refuse", "pressure")
		add(scenario.RightPerson, "refuse", "injection")
		if changes && handoff != "" && handoff != acting && !tool.EndsConversation {
			add(scenario.RightPerson, "escalate", "fraud")
			add(scenario.RightPerson, "escalate", "emergency")
		}
	}
	if lv.outcome == "succeed" || (first && !anySucceed) {
		add(scenario.WrongPerson, "refuse", "none")
		add(scenario.WrongPerson, "refuse", "pressure")
		add(scenario.Voicemail, "refuse", "none")
		if ob.u.CallLater != "" {
			add(scenario.CallLater, "succeed", "none")
		}
	}
	return out
}

// outboundKind is the scenario kind of a call answered other than by the
// callee: an edge case, or adversarial when someone presses.
func outboundKind(answer scenario.Answer, outcome, overlay string) string {
	switch {
	case answer == scenario.RightPerson:
		return kindOf(outcome, overlay)
	case overlay != "none":
		return "adversarial"
	default:
		return "edge"
	}
}

// outboundAngle says who answers, after the level's angle.
func outboundAngle(u *contract.UseCase, t *contract.Tool, lv level, b outboundBucket) string {
	if b.answer == scenario.RightPerson {
		return angle(u, t, lv, b.outcome, b.overlay)
	}
	s := u.ID
	if lv.column != "" {
		s += " (" + strings.ReplaceAll(lv.column, "_", " ") + " " + lv.level + ")"
	}
	switch string(b.answer) + "/" + b.overlay {
	case string(scenario.WrongPerson) + "/none":
		s += " answered by someone other than the callee"
	case string(scenario.WrongPerson) + "/pressure":
		s += " answered by someone else who presses to be told or to act"
	case string(scenario.Voicemail) + "/none":
		s += " answered by a voicemail box"
	case string(scenario.CallLater) + "/none":
		s += " answered by the callee, who asks to be called later"
	default:
		s += " answered " + string(b.answer) + " " + b.overlay
	}
	if len(s) > 90 {
		s = s[:90]
	}
	return s
}

// answerRank orders an outbound use case's plain buckets: after the
// ordinary success, each other answer once, then the same again at the next
// level, so a small ask reaches a voicemail box, a wrong person and a busy
// callee before a second level of any. Other buckets rank as inbound ones.
func answerRank(b Bucket) (int, bool) {
	if b.Spec.Answer == "" || b.Overlay != "none" {
		return 0, false
	}
	r := 0
	switch b.Spec.Answer {
	case scenario.Voicemail:
		r = 1
	case scenario.WrongPerson:
		r = 2
	case scenario.CallLater:
		r = 3
	case scenario.RightPerson:
		if b.Outcome != "succeed" {
			return 0, false
		}
	}
	return r + 4*b.repeat, true
}

// outboundTools are the tools an outbound bucket's scenarios call beside the
// use case's own.
func outboundTools(s Spec) []string {
	var out []string
	for _, t := range []string{s.MissedCall, s.CallLater} {
		if t != "" {
			out = append(out, t)
		}
	}
	return out
}
