// Package state holds keyed operator state.
//
// Table is a hash table from keys to values that takes the key's hash from
// the caller: a keyed exchange hashes each key once to route it, and the
// operator that receives the record reuses that hash to find its state, so a
// key is never hashed twice. The hash also names the key's key group (see
// package partition), which is how state is later snapshotted, restored and
// moved: by key group, never by rehashing.
//
//	t := state.NewTable[string, int64](0)
//	p := t.Upsert(h, "campaign-7") // *int64, zero on first sight
//	*p++
//
// A Table belongs to one goroutine; it is not safe for concurrent use.
// Pointers returned by Get and Upsert stay valid until the next Upsert or
// Delete.
package state
