// Package placement decides which instance owns each key group, treating
// load balance, the state a change moves and the records that cross
// processes as one optimisation, as ALBIC does (Madsen, Zhou and Cao,
// ICDE 2017): solved apart, they give worse answers. It is pure: it takes
// the figures and returns an assignment.
//
// A Problem is one or more Groups (a routing table each: the key groups
// of the keyed operators that share it), each with its key groups' loads,
// state sizes and current owners, and the instances it may place them on
// (each on a process); and Flows, the records per second from a key
// group of one group to a key group of another, which cost network when
// their owners are on different processes. An Assignment's Cost weighs
// the largest imbalance over the groups (an instance's load over the
// group's ideal, the larger of the mean load and its heaviest key group)
// against the share of all state bytes it moves and the share of all
// flows that cross processes: Total = Imbalance + Move·moved/bytes +
// Traffic·remote/flows.
//
// Heuristic starts, for each of a few caps on an instance's load over its
// group's ideal, from the key groups whose owners stay (the others placed
// heaviest first where they cost least) and from all of them placed anew
// that way; it moves key groups off instances above the cap, the
// cheapest per load relieved first, and towards their flows' partners
// where that costs less, then improves by single moves and swaps, each
// taken only when it lowers the cost (or, at an equal cost, spreads the
// load more evenly). A small problem's cheapest result is shaken from a
// fixed seed and improved again, so every process computes the same
// assignment. Exact finds the least cost by branch and bound for small
// problems, to measure the heuristic's gap.
package placement
