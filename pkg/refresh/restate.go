package refresh

import (
	"regexp"

	"github.com/suitegen/suitegen/pkg/ledger"
	"github.com/suitegen/suitegen/pkg/plan"
	"github.com/suitegen/suitegen/pkg/scenario"
)

// useSuffix is the angle suffix of an extension's bucket ("ANGLE (use K)").
var useSuffix = regexp.MustCompile(` \(use [0-9]+\)$`)

// Place counts each scenario of a suite in a bucket of pl, the plan of the
// contract as it now is, as Update.Narrow places a stale one: the bucket of
// its use case and angle (an extension's "(use K)" counting as its
// template's), else of its bucket id, else of its outcome and kind, else
// the first of its use case. A scenario of a use case pl has no bucket of
// counts in none (Bucket ""). It returns copies of the scenarios so placed,
// and pl's buckets with Done the number placed in each.
func Place(pl *plan.Plan, scs []scenario.Scenario) ([]scenario.Scenario, []ledger.Bucket) {
	bs := make([]ledger.Bucket, len(pl.Buckets))
	at := map[string]int{}
	for i, b := range pl.Buckets {
		bs[i] = ledger.Bucket{Bucket: b, State: ledger.BucketDone, Origin: ledger.OriginPlan}
		at[b.ID] = i
	}
	out := make([]scenario.Scenario, len(scs))
	for i := range scs {
		sc := scs[i]
		branch := sc.Branch
		if a := angleOf(branch); useSuffix.MatchString(a) {
			branch = useSuffix.ReplaceAllString(a, "")
		}
		best, score := "", -1
		for _, b := range pl.Buckets {
			if b.UseCase != sc.UseCase {
				continue
			}
			if s := fit(b, branch, sc.Bucket, &sc); s > score {
				best, score = b.ID, s
			}
		}
		sc.Bucket = best
		if best != "" {
			bs[at[best]].Done++
		}
		out[i] = sc
	}
	return out, bs
}
