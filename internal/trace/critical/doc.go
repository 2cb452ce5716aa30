// Package critical computes critical participation (CP) over a trace, as
// SnailTrail (NSDI 2018) defines it, and summarises it.
//
// A window [ts, te) of the trace is a program activity graph. Each worker
// in the window (one with an activity in it, or an end of a message edge
// through it) is a chain of nodes from its start node at ts to its end
// node at te; between consecutive nodes lies an activity, truncated at
// the window's edges, or a gap (time no activity covers: kind "unknown").
// A message edge joins the node at the end of a Send to the node at the
// start of its Recv, weighted by the transfer time; one that crosses the
// window's edge starts at the sender's start node or ends at the
// receiver's end node, truncated like an activity. Waiting activities
// (WaitInput, WaitCredit) have zero capacity: no path goes through them.
// A message received before it was sent (clocks of two processes apart)
// is dropped and counted.
//
// The transient critical paths are the paths from any worker's start node
// to any worker's end node. Every such path covers the window's time
// exactly once, so its weights sum to te − ts. N is their number; c(e),
// the number through edge e = (u, v), is the paths from a start node to
// u times the paths from v to an end node: one forward and one backward
// counting pass in topological order, never an enumeration. CP_e =
// c(e)·w_e / (N·(te − ts)), and the CP of a window sums to 1 when N > 0.
// A window with N = 0 (every worker waits at some point and no message
// bridges the waits) has no critical path; its CP is zero and it is left
// out of summaries over several windows.
//
// Path counts grow exponentially with message edges, so they are kept as
// a float64 mantissa with a separate integer exponent (count): they
// neither overflow nor underflow, with float64's relative precision.
//
// The package is pure: it reads no clock, opens no files, takes no locks.
package critical
