package metrics

import "github.com/suitegen/suitegen/pkg/prove"

// RefusalCode is one refusal a gate can give: the gate and code labels of
// the refused families.
type RefusalCode struct{ Gate, Code string }

// RefusalCodes is every (gate, code) refusal the gates can give, in the
// order pkg/prove lists them (and docs/scenario.md documents them). Every
// run's refused families start with each at zero, so a panel or alert on one
// reads 0, not "no data", before its first refusal.
var RefusalCodes = func() []RefusalCode {
	out := make([]RefusalCode, len(prove.Codes))
	for i, gc := range prove.Codes {
		out[i] = RefusalCode{Gate: string(gc.Gate), Code: string(gc.Code)}
	}
	return out
}()

// initRefusals creates m's refused series at zero for every documented code.
func (m *Metrics) initRefusals() {
	for _, rc := range RefusalCodes {
		m.ScenariosRefused.WithLabelValues(rc.Gate, rc.Code)
	}
}
