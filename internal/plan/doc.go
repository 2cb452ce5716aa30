// Package plan turns a job's logical graph into a physical plan: which
// operators run fused in one goroutine per instance, which start a task of
// their own, and what exchange connects each pair. It is pure: it takes the
// graph and returns decisions; the root package and the runtime carry them
// out.
//
// Rules (see docs/design.md):
//   - A source starts a task.
//   - An operator with one input that is stateless (map, filter, flatmap,
//     timestamps) or a sink is fused into its input's task when the two have
//     the same parallelism and the edge asks for no repartitioning.
//   - Any other operator (keyed windows, joins, unions) starts a task with an
//     inbox. Edges into it are key-group exchanges for keyed inputs;
//     otherwise forward when the parallelisms match, gather when the
//     receiver has one instance, and round-robin rebalance otherwise.
//
// Invariants: every node is in exactly one task; a task's head is a source
// or has an inbox; fused edges connect instances with the same index.
package plan
