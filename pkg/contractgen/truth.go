package contractgen

// Role is what a tool does to the world and the conversation.
type Role string

// The roles a generated tool has.
const (
	Reads    Role = "reads"
	Writes   Role = "writes"
	HandOff  Role = "hand-off"
	EndsCall Role = "ends-call"
)

// Free is the ground truth of an argument that names no record: words, an
// amount, an enum value of no table.
const Free = "free"

// Contract is the ground truth of one generated contract.
type Contract struct {
	Seed  int64
	Dir   string
	Agent string
	// Caller is the table.column of the caller's key.
	Caller   string
	Tables   []string
	Tools    []Tool
	UseCases []UseCase
	Rules    []Rule
}

// Tool is one tool as its author meant it.
type Tool struct {
	Name     string
	Role     Role
	Handler  string // path inside the contract, handlers/<name>.star
	Args     []Arg
	Branches []Branch
}

// Arg is one argument and the column its values live in.
type Arg struct {
	Name string
	// Ref is the table.column the argument names, or Free.
	Ref string
	// Also are other columns a reader may rightly bind it to (an amount
	// taken from the record's own amount).
	Also []string
	// XRef: the contract says Ref with an x-ref, so binding it proves
	// nothing about reading.
	XRef     bool
	Required bool
	// Fresh: the argument takes a value no row holds yet (an email address
	// to change to).
	Fresh bool
}

// Branch is one way a handler refuses.
type Branch struct {
	At string // handlers/<tool>.star:LINE, the line of the `if`
	// Reason is one word: missing (an existence guard), status, ownership,
	// date, amount, identity, unchanged, taken, limit, format, rank.
	Reason string
	// Column is the table.column of the row whose value decides the branch
	// (a status, an owner, a start date); "" when an argument's value alone
	// decides it (an amount, an address already taken).
	Column string
}

// Guard reports whether the branch is an existence guard: it refuses only
// when a read found no row.
func (b Branch) Guard() bool { return b.Reason == "missing" }

// UseCase is one use case and the tool its scenarios are about.
type UseCase struct {
	ID    string
	Tools []string
	Act   string
}

// Rule is one rule; Check is its sub-goal, "" when judged.
type Rule struct {
	ID    string
	Check string
}

// Tool returns the tool of that name, or nil.
func (c *Contract) Tool(name string) *Tool {
	for i := range c.Tools {
		if c.Tools[i].Name == name {
			return &c.Tools[i]
		}
	}
	return nil
}

// Arg returns the argument of that name, or nil.
func (t *Tool) Arg(name string) *Arg {
	for i := range t.Args {
		if t.Args[i].Name == name {
			return &t.Args[i]
		}
	}
	return nil
}

// Accepts reports whether ref (table.column, "" for none) is a right
// binding of the argument.
func (a Arg) Accepts(ref string) bool {
	if ref == "" {
		ref = Free
	}
	if ref == a.Ref {
		return true
	}
	for _, o := range a.Also {
		if o == ref {
			return true
		}
	}
	return false
}
