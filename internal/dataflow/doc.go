// Package dataflow holds what the engine's parts share: the logical graph
// the API builds (Graph, Node, InputEdge), the contexts an operator
// instance and an exchange sender are made with (TaskCtx, ExchangeCtx),
// the unit that crosses every boundary (Batch, KBatch, Pusher), the job's
// configuration (JobConfig and its options), and the interfaces of
// inputs and outputs (Input, Reader, Output, Seekable, Rescalable,
// Recoverable, Checkpointed, TwoPhase, Codec) that the root package
// re-exports as aliases.
//
// It runs nothing: the operators (internal/op), exchanges
// (internal/exchange, internal/prompt) and the engine that wires them
// (internal/engine) build on these types.
//
// A batch pushed into a fused operator is borrowed for the call; a batch
// sent through an inbox is dense and owned by the receiver, which
// releases it to its pool:
//
//	var b dataflow.Batch[int]
//	b.V = append(b.V[:0], 1, 2, 3)
//	err := next.Push(&b) // next is the operator's Pusher[int]
package dataflow
