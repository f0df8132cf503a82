package contractgen

// The vocabularies contracts are dealt from. Tool names take their verbs and
// nouns from one set, use case ids from another that shares no word with it,
// so that a use case names its tools only through its `tools` list.

type personKind struct {
	singular, plural, prefix string
}

var persons = []personKind{
	{"member", "members", "M"}, {"patient", "patients", "P"}, {"customer", "customers", "C"},
	{"client", "clients", "K"}, {"guest", "guests", "G"}, {"subscriber", "subscribers", "S"},
	{"tenant", "tenants", "T"}, {"traveller", "travellers", "V"}, {"learner", "learners", "L"},
}

// resourceKind is a record a caller owns; syn names it in use case ids.
type resourceKind struct {
	noun, plural, syn, prefix string
}

var resources = []resourceKind{
	{"booking", "bookings", "reservation", "BK"}, {"policy", "policies", "cover", "PL"},
	{"shipment", "shipments", "delivery", "SH"}, {"ticket", "tickets", "pass", "TK"},
	{"claim", "claims", "request", "CL"}, {"lease", "leases", "rental", "LS"},
	{"invoice", "invoices", "bill", "IN"}, {"order", "orders", "purchase", "OR"},
	{"appointment", "appointments", "visit", "AP"}, {"loan", "loans", "advance", "LN"},
	{"voucher", "vouchers", "coupon", "VC"}, {"repair", "repairs", "fix", "RP"},
}

// statusSets: [0] is the state a record can still be changed or cancelled
// in, [1] the finished state a refund needs, [2] the cancelled state.
var statusSets = [][]string{
	{"pending", "completed", "cancelled", "on_hold"},
	{"booked", "fulfilled", "voided", "disputed"},
	{"open", "closed", "withdrawn", "suspended"},
	{"scheduled", "done", "cancelled", "no_show"},
	{"active", "settled", "terminated", "frozen"},
}

var kindSets = [][]string{
	{"standard", "express", "premium"}, {"basic", "family", "business"},
	{"small", "medium", "large"}, {"economy", "comfort", "first"},
}

var tierTables = []struct{ table, noun string }{{"tiers", "tier"}, {"plans", "plan"}, {"bands", "band"}}
var tierCodes = [][]string{{"bronze", "silver", "gold"}, {"basic", "plus", "premier"}, {"lite", "core", "max"}}

var firstNames = []string{"Ava", "Ben", "Chidi", "Dana", "Elif", "Farah", "Goran", "Hana", "Ines", "Jonas",
	"Kemi", "Luis", "Mei", "Nadia", "Omar", "Priya", "Quinn", "Rosa", "Sven", "Tariq", "Uma", "Viktor", "Wen", "Yara"}
var lastNames = []string{"Abara", "Berg", "Costa", "Dlamini", "Eriksen", "Fischer", "Garcia", "Haddad", "Ito",
	"Jensen", "Kowalski", "Lopez", "Moreau", "Novak", "Okafor", "Petrov", "Rossi", "Silva", "Tanaka", "Weber"}

// The verbs of tool names, per operation.
var toolVerbs = map[string][]string{
	"get":      {"get", "fetch", "lookup", "show", "retrieve"},
	"list":     {"list", "browse", "enumerate"},
	"cancel":   {"cancel", "void", "revoke", "withdraw", "terminate"},
	"refund":   {"refund", "credit", "reimburse"},
	"change":   {"change", "modify", "amend", "switch"},
	"add":      {"add", "append", "attach"},
	"email":    {"update", "set", "replace"},
	"tier":     {"upgrade", "rebase", "move"},
	"verify":   {"verify", "authenticate", "identify"},
	"verify2":  {"match", "confirm", "check"},
	"transfer": {"transfer", "escalate", "route"},
	"end":      {"end", "hangup", "close"},
}

// The words of use case ids, per operation: none of them is a word of a
// tool name. %s is the record's synonym.
var useCaseIDs = map[string][]string{
	"get":      {"where-is-my-%s", "%s-whereabouts", "state-of-my-%s"},
	"list":     {"recap-past-%ss", "history-of-%ss"},
	"cancel":   {"stop-my-%s", "call-off-%s", "drop-%s"},
	"refund":   {"money-back-on-%s", "%s-overcharge", "repayment-for-%s"},
	"change":   {"different-%s-type", "swap-%s-grade"},
	"add":      {"extra-on-%s", "%s-extras"},
	"email":    {"new-mail-address", "inbox-moved"},
	"tier":     {"better-package", "step-up-package"},
	"transfer": {"speak-with-someone", "need-a-person"},
}

var useCaseTexts = map[string]string{
	"get":      "Tell the caller what state their %s is in",
	"list":     "Go over the caller's recent %ss",
	"cancel":   "Stop a %s that has not started yet",
	"refund":   "Pay back part of a finished %s the caller was overcharged for",
	"change":   "Put a %s on a different type while it can still be changed",
	"add":      "Put an extra line on an open %s",
	"email":    "Move the caller's mail to a new address",
	"tier":     "Move the caller onto a better package",
	"transfer": "Pass the caller to a person for what the line cannot do",
}

var departments = []string{"billing", "complaints", "fraud", "accessibility", "retention"}
