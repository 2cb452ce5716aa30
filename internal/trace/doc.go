// Package trace records what the workers of a job do, as activities on a
// timeline, stores traces in files (Writer, Decode, ReadFile; Merge joins
// the files of several processes) and exports them to the Chrome trace
// event format. Package critical, below it, analyses them by critical
// participation (SnailTrail, NSDI 2018).
//
// A worker is one goroutine of the runtime: an operator instance (a
// chain of fused operators) or a pump that feeds an inbox from another
// process. Each worker records non-overlapping activities (Event) into
// its own Recorder without locks; a Recorder hands full buffers to the
// process's Tracer. Message edges join a Send event on one worker to the
// Recv event of the same message on another: both carry the channel's
// identity and the message's index on it (channels are FIFO, so the two
// ends count alike and nothing is added to the message).
//
// Recording costs a load of an atomic flag per activity when tracing is
// off.
package trace
