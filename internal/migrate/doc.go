// Package migrate plans the reconfiguration of a keyed operator: which key
// groups move from which instance to which, in what steps, and what of
// their state must travel.
//
// A Reconfig ("from epoch E, operator O routes by table T") is data that
// processes announce to each other ahead of E; Encode gives it one
// canonical encoding (magic, version, fields, CRC-32C) and Decode reads it
// back, refusing anything else with an error wrapping ErrCorrupt.
// EncodeSteps encodes the tables of a plan's steps for one operator at
// once, the first whole and each later one as the key groups whose owner
// changes, so that a plan of many steps takes a few bytes a step;
// DecodeSteps reads it (or Encode's) back into the same tables, with the
// same guarantees, and MaxStepOwners bounds what it builds.
//
// Plan turns an old routing table into a new one as a sequence of Steps,
// with the strategies of Megaphone: AllAtOnce (one step), Fluid (one key
// group per step) and Batched (the default: each step a matching). Reuse
// says, for each move, whether the latest complete checkpoint lets the old
// owner ship only what changed since (the live rescale asks it for each
// operator's key groups at each step).
//
// Invariants of a plan from old to new (same key-group count):
//   - every key group whose owner differs moves exactly once, from its old
//     owner to its new one, and no other key group moves;
//   - applying the steps' moves in order to old's ownership gives each
//     step's table, and the last step's table assigns what new does, over
//     exactly new's instances; the tables before it count max(old, new)
//     instances (new instances own nothing until a move reaches them,
//     retiring ones keep what has not left them yet);
//   - step i's table is in force from epoch new.From + i*Gap;
//   - a batched step has no instance as the source of two of its moves nor
//     as the destination of two; batched plans take max(Δ, ceil(E/m))
//     steps for E moves, a cap of m moves per step (no cap: Δ) and Δ the
//     most moves any instance sends or receives, the fewest possible;
//     with PerPair g above 1, a step hands at most g key groups between
//     the same two instances, each instance sends to at most one and
//     receives from at most one, and the counts above are of such bundles;
//   - fluid plans take E steps, all-at-once plans one (none if E is 0).
//
// Lives says, from the tables an operator routes by, when each of its
// instances takes part: from the epoch before the first table that gives
// it a key group to the epoch after the first from which it owns none
// for good, so that instances start and end with their key groups.
//
// The package is pure: no clock, no goroutines, no files, no locks.
package migrate
