// Package ground ties a contract's tool arguments to the records of its
// world, and gives every scenario records of its own.
//
// Everything here reads one value: a Graph (New), the contract's tables, seed
// rows and foreign keys, with the questions a planner asks of them (Owner,
// Where, Holds, LowCardinality, Sample). It never opens a database itself; the
// one place it needs the world to answer, Discover, asks through the small
// Rehearser interface (pkg/probe implements it on throwaway copies).
//
// A run uses the package in three steps.
//
// Grounding by behaviour. Graph.Discover finds, for every tool argument, the
// column whose values the handler accepts (a Binding: the column, how it was
// found, where a case takes its value). Candidate columns are ranked by type,
// pattern and likeness to the argument, then tried on copies until the
// handler answers ok; a refusal blames only the arguments the handler read
// before refusing. Names only order the search: what decides is what the
// handler does with the value.
//
// Cases. Graph.Cases picks, for a tool and its bindings, seed rows a case can
// stand on (a Bound: the row of each table it reaches), and Fill, FillAll and
// Value turn a case into call arguments. Renew and Freshen make a
// state-changing call ask for a change: an argument equal to what the case's
// record already holds (an address on file, a passenger list as booked) takes
// another row's value, so the act does not set what is already there.
//
// Minting. No two scenarios share a record. Graph.Mint copies a case's
// target row, its owner (renamed to the dealt caller, a Person) and the rows
// that hang off them, with every unique column given a value no seed row and
// no other scenario of the run holds (Fresh, Room: counted slots in the
// column's own shape). The Setup it returns is the scenario's setup SQL and
// the new keys; Carry maps statements written against seed rows onto the
// minted ones.
//
// The package is pure and deterministic: the same contract and the same
// inputs give the same bindings, cases and minted values, which is what lets
// a run be replayed and a suite be revised byte for byte.
package ground
