package metrics

// RefusalCode is one refusal a gate can give: the gate and code labels of
// the refused families.
type RefusalCode struct{ Gate, Code string }

// RefusalCodes is every (gate, code) refusal docs/scenario.md documents, in
// its order. Every run's refused families start with each at zero, so a
// panel or alert on one reads 0, not "no data", before its first refusal.
// TestRefusalCodesDocumented keeps the list and the document equal.
var RefusalCodes = []RefusalCode{
	{"static", "bad-name"}, {"static", "missing-field"}, {"static", "unknown-use-case"}, {"static", "bad-kind"},
	{"static", "bad-expects"}, {"static", "tempting-required"}, {"static", "empty-solution"}, {"static", "unknown-tool"},
	{"static", "no-handler"}, {"static", "bad-args"}, {"static", "requires-unmet"}, {"static", "no-sub-goals"},
	{"static", "unknown-sub-goal"}, {"static", "bad-params"}, {"static", "no-settled-check"}, {"static", "placeholder"},
	{"ready", "setup-failed"}, {"ready", "unknown-caller"}, {"ready", "bad-ready"}, {"ready", "not-ready"},
	{"solvable", "step-crashed"}, {"solvable", "step-refused"}, {"solvable", "check-broken"}, {"solvable", "check-failed"},
	{"solvable", "world-error"},
	{"grounding", "ungrounded"}, {"grounding", "output-not-in-results"},
	{"not-vacuous", "vacuous"}, {"not-vacuous", "tempting-passes"}, {"not-vacuous", "check-broken"},
	{"suite", "unknown-bucket"}, {"suite", "bucket-full"}, {"suite", "duplicate-name"}, {"suite", "duplicate-branch"},
	{"suite", "duplicate-content"}, {"suite", "duplicate-code"},
}

// initRefusals creates m's refused series at zero for every documented code.
func (m *Metrics) initRefusals() {
	for _, rc := range RefusalCodes {
		m.ScenariosRefused.WithLabelValues(rc.Gate, rc.Code)
	}
}
