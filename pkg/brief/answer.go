package brief

import (
	"encoding/json"
	"strings"
)

// A writer answers every tool call in the conversation. A call it could not
// serve as asked is answered with an Error: the reason in words for the
// model, and a Code a program (the builtin model, a test) reads instead of
// the words.

// Code says why a tool call was not served as asked.
type Code string

// Codes of a writer's Error answers.
const (
	// CodeNotJSON: the arguments are not a JSON value; the call never ran.
	CodeNotJSON Code = "arguments-not-json"
	// CodeUnknownTool: no tool of that name; the call never ran.
	CodeUnknownTool Code = "unknown-tool"
	// CodeTooLarge: the arguments are over the size limit; never parsed.
	CodeTooLarge Code = "arguments-too-large"
	// CodeBadArguments: JSON, but not the tool's parameters.
	CodeBadArguments Code = "bad-arguments"
	// CodeInvalid: the parameters' values are not acceptable (a name's
	// form, an unknown use case, a sub-goal that does not compile).
	CodeInvalid Code = "invalid"
	// CodeTaken: the name is taken by something else.
	CodeTaken Code = "taken"
	// CodeFull: a bound on what a run may hold is reached.
	CodeFull Code = "full"
	// CodeLedger: the ledger could not be read or written; try again.
	CodeLedger Code = "ledger-unavailable"
	// CodeNotProved: the gates could not run (it is not a refusal); submit
	// the scenario again.
	CodeNotProved Code = "not-proved"
	// CodeNotServed: the tool is offered but this writer does not serve it.
	CodeNotServed Code = "not-served"
)

// NotRun reports whether a call answered with c never reached its tool: its
// arguments or its name did not arrive as a call (a garbled reply), so
// sending the intended call again is safe and changes nothing.
func (c Code) NotRun() bool { return c == CodeNotJSON || c == CodeUnknownTool }

// Error is the answer to a tool call the writer did not serve as asked.
type Error struct {
	Message string `json:"error"`
	Code    Code   `json:"code"`
}

// Answer is the error as a tool answer (one line of JSON).
func (e Error) Answer() string {
	b, err := json.Marshal(e)
	if err != nil {
		return `{"error":"unrenderable error","code":"invalid"}`
	}
	return string(b)
}

// ParseError reads an Error answer; ok is false for any other answer,
// including a tool's own result that happens to carry an "error" field
// without a code.
func ParseError(answer string) (e Error, ok bool) {
	answer = strings.TrimSpace(answer)
	if !strings.HasPrefix(answer, "{") {
		return Error{}, false
	}
	if err := json.Unmarshal([]byte(answer), &e); err != nil || e.Code == "" || e.Message == "" {
		return Error{}, false
	}
	return e, true
}
