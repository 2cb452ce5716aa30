// Package op holds the operators: the builders that add a node to the
// graph for each API function (Map, Filter, FlatMap, KeyBy, Window,
// Join, Process, KeyedProcess, CoProcess, Side, EventTime, Union, Sink)
// and the operator instances they make: record operators fused into
// their task's chain, the keyed window and join tasks with their
// watermarks, firing, flushing and snapshots, the keyed process
// functions with their timers, state TTL and side outputs, sources (whose
// instances can close their reader and open one of another share of the
// input while the job runs) and sinks, and keyed state over a state
// backend. Keyed state is saved by key group (snapshot.go) and handed
// over while the job runs, whole (handover.go) or as a delta on a
// checkpoint's blob of the key group, which the new owner merges
// (delta.go).
//
// An operator instance is a dataflow.Pusher (fused) or a runtime task
// (after an inbox); it is made with a dataflow.TaskCtx and pushes to the
// pushers of its consumers, which the engine makes from the plan.
package op
