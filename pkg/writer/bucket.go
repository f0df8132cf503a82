package writer

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/suitegen/suitegen/pkg/brief"
	"github.com/suitegen/suitegen/pkg/ledger"
	"github.com/suitegen/suitegen/pkg/plan"
	"github.com/suitegen/suitegen/pkg/scenario"
)

// maxAngle bounds a reported bucket's angle, in characters.
const maxAngle = 90

type reportBucketArgs struct {
	UseCase string `json:"use_case"`
	Angle   string `json:"angle"`
	Outcome string `json:"outcome"`
	Overlay string `json:"overlay"`
	Why     string `json:"why"`
}

type reportBucketResult struct {
	Bucket string `json:"bucket"`
	Want   int    `json:"want"`
	Note   string `json:"note"`
}

// reportBucket records a kind of case the plan never saw. It is stored with
// want 0 and a capacity of 1, so it never makes the run write more than asked:
// the planner raises it only when a top-up needs spare capacity. The ledger
// assigns the id and returns the existing bucket for a repeated report.
func (ss *session) reportBucket(ctx context.Context, args string) string {
	var a reportBucketArgs
	if err := json.Unmarshal([]byte(args), &a); err != nil {
		return errorAnswer(brief.CodeBadArguments, "report_bucket takes {use_case, angle, outcome, overlay, why}: %v", err)
	}
	a.Angle, a.Why = strings.TrimSpace(a.Angle), strings.TrimSpace(a.Why)
	c := ss.e.C
	var ucs []string
	for _, u := range c.UseCases {
		ucs = append(ucs, u.ID)
	}
	switch {
	case c.UseCase(a.UseCase) == nil:
		return errorAnswer(brief.CodeInvalid, "use_case %q is not in the contract; it is one of %s.", clip(a.UseCase, 80), strings.Join(ucs, ", "))
	case !slices.Contains(scenario.Outcomes, a.Outcome):
		return errorAnswer(brief.CodeInvalid, "outcome %q is not one of %s.", clip(a.Outcome, 40), strings.Join(scenario.Outcomes, ", "))
	case !slices.Contains(plan.Overlays, a.Overlay):
		return errorAnswer(brief.CodeInvalid, "overlay %q is not one of %s.", clip(a.Overlay, 40), strings.Join(plan.Overlays, ", "))
	case a.Angle == "":
		return errorAnswer(brief.CodeInvalid, "angle is empty; say in a few words what kind of case this is.")
	case utf8.RuneCountInString(a.Angle) > maxAngle:
		return errorAnswer(brief.CodeInvalid, "angle is %d characters, over %d; say it shorter.", utf8.RuneCountInString(a.Angle), maxAngle)
	case a.Why == "":
		return errorAnswer(brief.CodeInvalid, "why is empty; say why the plan's buckets do not cover this case.")
	}
	buckets, err := ss.w.cfg.Ledger.Buckets(ctx, ss.b.Run)
	if err != nil {
		return ss.ledgerError(err)
	}
	// The new bucket sits in the cell and theme of the use case's planned
	// buckets (this slice's first), and borrows their tools: a writer dealt it
	// later gets the same working spec, without the template rows of a level.
	var sib *ledger.Bucket
	for _, id := range ss.sliceBucketIDs() {
		for i := range buckets {
			if buckets[i].ID == id && buckets[i].UseCase == a.UseCase && sib == nil {
				sib = &buckets[i]
			}
		}
	}
	for i := range buckets {
		if sib == nil && buckets[i].UseCase == a.UseCase && buckets[i].Origin == ledger.OriginPlan {
			sib = &buckets[i]
		}
	}
	b := ledger.Bucket{Bucket: plan.Bucket{UseCase: a.UseCase, Angle: a.Angle, Outcome: a.Outcome, Overlay: a.Overlay,
		Kind: plan.KindOf(a.Outcome, a.Overlay), Theme: a.UseCase, Cell: a.UseCase, Want: 0, Axes: map[string]string{},
		Spec: plan.Spec{Capacity: 1}}, Notes: clip(a.Why, 500), Origin: ledger.OriginWriter}
	if sib != nil {
		sp := sib.Spec
		b.Theme, b.Cell = sib.Theme, sib.Cell
		b.Spec.Tools, b.Spec.Tool, b.Spec.Then, b.Spec.Gated, b.Spec.Handoff, b.Spec.Table, b.Spec.Rules = sp.Tools, sp.Tool, sp.Then, sp.Gated, sp.Handoff, sp.Table, sp.Rules
	}
	got, err := ss.w.cfg.Ledger.AddBucket(ctx, ss.b.Run, b)
	if err != nil {
		return ss.ledgerError(err)
	}
	ss.w.log.Info("bucket reported", "run", ss.b.Run, "slice", ss.b.Slice, "bucket", got.ID, "use_case", a.UseCase, "angle", a.Angle)
	return jsonText(reportBucketResult{Bucket: got.ID, Want: got.Want,
		Note: "recorded with want 0: the planner deals it only when a top-up needs more capacity; keep writing this slice's buckets"})
}

func (ss *session) sliceBucketIDs() []string {
	ids := make([]string, len(ss.b.Buckets))
	for i, b := range ss.b.Buckets {
		ids[i] = b.ID
	}
	return ids
}
