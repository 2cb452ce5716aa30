// Package agree turns a job's figures, frozen by every process at the
// end of each policy interval, into sizing decisions that every process
// of the job computes alike, with no master.
//
// A round is the figures every process taking part froze at one policy
// epoch E (its own instances' counters, as internal/metrics encodes them,
// exactly the bytes it sent its peers), with the keyed operators' active
// instances in the routing table in force at E and whether that table
// changed within the interval (a migration under way). A Sizer steps
// through the rounds in epoch order: DS2 (internal/ds2) over the true
// rates between the round and the one before it, the keyed operators'
// largest sizing through a decider. Its Outcome carries a digest of all
// it decided from (the decider's state and both rounds' bytes): equal
// digests mean equal decisions. A process acts on a decision only once
// every process of the round has sent the same digest for it; a round
// whose digests differ decides nothing, and the processes start their
// deciders afresh at an epoch they all name (ResetAt).
//
// A round also carries its Capacity, the keyed instances of the
// processes taking part, which no decision goes above, and its Outcome
// the processes the sizing Needs. The first round of a set of processes
// (the job's first, or the first after a process joined or left) starts
// every Sizer afresh in one state, with a digest of the round alone, so
// that a process that joined agrees with the others from there.
//
// The package is pure: no clock, goroutines or I/O. The engine freezes
// the figures, carries them and the digests in the summaries the
// processes exchange, and carries out the decisions.
package agree
