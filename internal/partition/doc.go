// Package partition decides where records go at an exchange.
//
// Keyed state and keyed routing are organised by key group, as in Flink: a
// key's 64-bit hash picks one of K key groups (K fixed for the life of a job,
// default 128), and each of the p instances of a keyed operator owns a
// contiguous range of key groups. Rescaling therefore reassigns ranges and
// never rehashes state.
//
// The hash is deterministic: the same key gives the same hash in every
// process and every run, so processes agree on ownership without talking.
//
//	kg := partition.KeyGroupOf(partition.HashString("campaign-7"), 128)
//	owner := partition.Owner(kg, 128, 4) // instance 0..3
//
// For the micro-batch strategies of keyed aggregations (Strategy) it holds
// the pure parts: Buffer (per-epoch key statistics, with the keys kept in
// count order online), Grouped (an epoch's records grouped by key as they
// arrive), Planner (Prompt's map blocks with hot keys split, and the
// reduce table; hash plans), Plan.Reweigh (the reduce table for unequal
// partials), TwoChoices (partial key grouping), Elastic (the task-count
// controller) and Imbalance (max over mean, weighted over epochs). None
// reads the clock or starts a goroutine.
//
// Invariants: KeyGroupOf is in [0, K); Owner is in [0, p) and monotone in
// the key group; Range(i, K, p) is exactly the set of key groups owned by i.
// A Plan assigns every record of every key to exactly one block, no two
// fragments of a key share a block, and no block holds more than
// max(T, T-1+c) records for T = ceil(records/blocks) and c the largest
// count of a key that is not split.
package partition
