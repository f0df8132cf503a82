package brief

import (
	"slices"

	"github.com/suitegen/suitegen/pkg/plan"
	"github.com/suitegen/suitegen/pkg/scenario"
)

// reachable is a bucket's second request (plan.Next) as the brief carries
// it: only the templates the bucket's own cases reach (its case k takes
// the bucket's template, and the second request that same record), with
// their choices and prior statements, and nothing the bucket's spec says
// already (strides, bookkeeping).
func reachable(nx *plan.Next, templates []string) *plan.Next {
	if nx == nil {
		return nil
	}
	out := *nx
	s := &out.Spec
	s.Templates = slices.DeleteFunc(slices.Clone(s.Templates), func(t string) bool { return !slices.Contains(templates, t) })
	if len(s.Choices) > 0 {
		ch := map[string]plan.Choice{}
		for _, t := range s.Templates {
			if c, ok := s.Choices[t]; ok {
				ch[t] = c
			}
		}
		s.Choices = ch
	}
	if len(s.Prior) > 0 {
		pr := map[string][]scenario.Statement{}
		for _, t := range s.Templates {
			if p, ok := s.Prior[t]; ok {
				pr[t] = p
			}
		}
		s.Prior = pr
	}
	s.Strides, s.Callers = nil, nil
	return &out
}
