// Package contractgen writes random but realistic contract directories with
// known ground truth, for testing and benchmarking how well suitegen reads a
// contract it has never seen.
//
// It is test tooling: nothing in the product imports it. Generate writes one
// contract per seed (the same seed always writes the same bytes) and returns
// what its author meant: the table.column each tool argument names (or
// "free"), each handler's refusal branches (the file:line of the `if` that
// refuses, with a one-word reason), each tool's role, and each use case's
// acting tool. The contracts mix what real ones hold: tools named in snake,
// camel and kebab case with verbs that share no word with the use case ids,
// worlds of foreign-key chains, composite keys, multi-column CHECKs, unique
// indexes, enum-keyed columns and dates relative to the world's clock, callers
// identified by first name, last name and date of birth, handlers with status,
// ownership, date and amount checks, and rules with a code check.
//
// It imports only the standard library, so that the packages it measures
// (pkg/plan, pkg/ground) can use it from their tests without a cycle.
package contractgen
