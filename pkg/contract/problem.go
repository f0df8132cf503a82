package contract

import (
	"fmt"
	"sort"
	"strings"
)

// Problem is one thing wrong with a contract directory. File is relative to
// the contract directory; Line is 1-based, 0 when the problem concerns the
// whole file.
type Problem struct {
	File    string `json:"file"`
	Line    int    `json:"line,omitempty"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

// String renders "file:line: code: message" (no line part when Line is 0).
func (p Problem) String() string {
	if p.Line > 0 {
		return fmt.Sprintf("%s:%d: %s: %s", p.File, p.Line, p.Code, p.Message)
	}
	return fmt.Sprintf("%s: %s: %s", p.File, p.Code, p.Message)
}

// Problems is every problem found in one contract. Every problem is an error:
// a contract with any problem must not be used.
type Problems []Problem

// Error joins the problems one per line, so a Problems can be returned as an error.
func (ps Problems) Error() string {
	lines := make([]string, len(ps))
	for i, p := range ps {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

// Err returns ps as an error, or nil when there are none (avoiding the typed-nil trap).
func (ps Problems) Err() error {
	if len(ps) == 0 {
		return nil
	}
	return ps
}

// Has reports whether some problem carries code.
func (ps Problems) Has(code string) bool {
	for _, p := range ps {
		if p.Code == code {
			return true
		}
	}
	return false
}

// Sort orders problems by file, line, code and message (stable output for the
// same directory).
func (ps Problems) Sort() {
	sort.SliceStable(ps, func(i, j int) bool {
		a, b := ps[i], ps[j]
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		if a.Code != b.Code {
			return a.Code < b.Code
		}
		return a.Message < b.Message
	})
}

// Problem codes. They are stable: tooling matches on them and docs/contract.md
// documents each one.
const (
	CodeMissingFile       = "missing-file"
	CodeYAMLSyntax        = "yaml-syntax"
	CodeUnknownField      = "unknown-field"
	CodeMissingField      = "missing-field"
	CodeDuplicateKey      = "duplicate-key"
	CodeBadValue          = "bad-value"
	CodeUnquotedHash      = "unquoted-hash"
	CodeNoTools           = "no-tools"
	CodeDuplicateTool     = "duplicate-tool"
	CodeDuplicateRule     = "duplicate-rule"
	CodeBadRuleCheck      = "bad-rule-check"
	CodeDuplicateUseCase  = "duplicate-use-case"
	CodeDuplicateSequence = "duplicate-sequence"
	CodeUnknownRequires   = "unknown-requires"
	CodeRequiresCycle     = "requires-cycle"
	CodeUnknownParam      = "unknown-param"
	CodeBadParamsSchema   = "bad-params-schema"
	CodeBadXRef           = "bad-x-ref"
	CodeUnknownTool       = "unknown-tool"
	// Outbound use cases.
	CodeDirectionNotAllowed = "direction-not-allowed"
	CodeUnknownPurpose      = "unknown-purpose"
	CodeOutboundNoCaller    = "outbound-no-caller"
	CodePurposeNoCallee     = "purpose-no-callee"
	CodeUnknownCallerTable  = "unknown-caller-table"
	CodeUnknownCallerKey    = "unknown-caller-key"
	CodeUnknownCallerTool   = "unknown-caller-tool"
	CodeUnknownSeqExpect    = "unknown-sequence-expect"
	CodeBadStepArgs         = "bad-step-args"
	CodeHandlerMissing      = "handler-missing"
	CodeHandlerSyntax       = "handler-syntax"
	CodeHandlerNoHandle     = "handler-no-handle"
	CodeLibSyntax           = "lib-syntax"
	CodeUnknownLoad         = "unknown-load"
	CodeSubGoalSyntax       = "subgoal-syntax"
	CodeSubGoalNoCheck      = "subgoal-no-check"
	CodeSubGoalBadParams    = "subgoal-bad-params"
	CodeSchemaSQL           = "schema-sql"
	CodeSeedUnknownTable    = "seed-unknown-table"
	CodeSeedBadJSON         = "seed-bad-json"
	CodeSeedUnknownColumn   = "seed-unknown-column"
	CodeSeedNotNull         = "seed-not-null"
)

// Codes lists every problem code Load can report, in documentation order.
var Codes = []string{
	CodeMissingFile, CodeYAMLSyntax, CodeUnknownField, CodeMissingField, CodeDuplicateKey,
	CodeBadValue, CodeUnquotedHash, CodeNoTools, CodeDuplicateTool, CodeDuplicateRule,
	CodeBadRuleCheck, CodeDuplicateUseCase, CodeDuplicateSequence, CodeUnknownRequires, CodeRequiresCycle,
	CodeUnknownParam, CodeBadParamsSchema, CodeBadXRef, CodeUnknownTool,
	CodeDirectionNotAllowed, CodeUnknownPurpose, CodeOutboundNoCaller, CodePurposeNoCallee, CodeUnknownCallerTable,
	CodeUnknownCallerKey, CodeUnknownCallerTool, CodeUnknownSeqExpect, CodeBadStepArgs,
	CodeHandlerMissing, CodeHandlerSyntax, CodeHandlerNoHandle, CodeLibSyntax, CodeUnknownLoad,
	CodeSubGoalSyntax, CodeSubGoalNoCheck, CodeSubGoalBadParams, CodeSchemaSQL,
	CodeSeedUnknownTable, CodeSeedBadJSON, CodeSeedUnknownColumn, CodeSeedNotNull,
}

// report collects problems for one file.
type report struct {
	ps *Problems
}

func (r report) add(file string, line int, code, format string, args ...any) {
	*r.ps = append(*r.ps, Problem{File: file, Line: line, Code: code, Message: fmt.Sprintf(format, args...)})
}
