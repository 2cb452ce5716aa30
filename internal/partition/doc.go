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
// Invariants: KeyGroupOf is in [0, K); Owner is in [0, p) and monotone in
// the key group; Range(i, K, p) is exactly the set of key groups owned by i.
package partition
