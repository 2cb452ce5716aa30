// Package plan turns a job's logical graph into a physical plan: how many
// instances each operator runs in, which operators form parallel regions,
// which run fused in one goroutine per instance, what exchange connects
// each pair, and, in an ordered job, how each region's exit restores the
// input order. It is pure: it takes the graph and returns decisions; the
// engine (internal/engine) and the runtime carry them out.
//
// Every node declares its state (Stateless, Keyed by a named key, or
// Unkeyed, the zero value) and its Selectivity. The rules (see
// docs/design.md, "Plan"):
//
//   - Unkeyed state runs in one instance; so do sinks unless told, and
//     sources in an ordered job. Keyed operators run in at most one
//     instance per key group; the rest in Config.Workers.
//
//   - A keyed input is forwarded when the sending region is keyed by the
//     same key name at the same parallelism and the receiver is a record
//     operator; otherwise it is routed by key group. Unkeyed inputs are
//     forward, gather or round-robin by parallelism.
//
//   - A one-input node on a forward edge joins its input's region, and is
//     fused into its input's task if it is a record operator or sink.
//
//   - An ordered region exit is a round-robin merge when the region sees
//     whole units, a merge by sequence number when it sees key-group
//     parts, with pulses when an operator may drop records.
//
//     p, err := plan.Build(nodes, plan.Config{Workers: 4, KeyGroups: 128, Ordered: true})
//     fmt.Print(p.Explain())
//
// Invariants: every node is in exactly one task and one region; a task's
// head is a source or has an inbox; fused edges connect instances with the
// same index; an operator with unkeyed state (other than a source or a
// sink, whose instances the user chooses) never has more than one
// instance.
package plan
